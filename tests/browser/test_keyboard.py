"""Figures a keyboard can use, and controls that say when they do nothing.

- Tab from the top of each article reaches every enabled control of every figure; each shows a
  visible focus indicator (its computed outline or box-shadow differs from when it is not
  focused); arrow keys move a slider and a drop-down, and once Python is ready the figure
  re-renders with the native outputs.
- A control the registry declares inactive in the current state is disabled, says why in a
  visible note it is described by, and follows the control that switches it at once, before
  Python is ready too; its value is kept and still sent to Python. The page decides as
  ``Param.active`` does, for every gated control of every demo.
- Outputs print Python's own text (format_outputs), live as at build time.
"""

from __future__ import annotations

import pytest

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import (
    AS_PARSED, BOOT_MS, PUBLIC, READ_PARAMS, article_paths, output_values, printed, printed_for,
    wait_ready, worker_caught_up)

pytestmark = pytest.mark.browser

# Every enabled, visible control of the figures (what Tab must reach), each marked with a key.
CONTROLS = """() => [...document.querySelectorAll('figure.demo')].flatMap(f =>
  [...f.querySelectorAll('.demo-controls input, .demo-controls select, .demo-controls button, .demo-outputs summary')]
    .filter(el => !el.disabled && el.offsetParent !== null)
    .map((el, i) => (el.dataset.kb = `${f.id}/${el.name || el.dataset.for || el.tagName.toLowerCase()}/${i}`)))"""
RING = "el => { const s = getComputedStyle(el); return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow].join(' | '); }"
ACTIVE = f"""() => {{ const el = document.activeElement;
  return el && el.dataset.kb ? {{key: el.dataset.kb, ring: ({RING})(el)}} : null; }}"""
RING_OF = "key => (" + RING + ")(document.querySelector(`[data-kb='${key}']`))"


def tab_through(page, limit=600) -> dict[str, str]:
    """{control key: its computed ring while focused} for every figure control Tab reaches."""
    page.locator("body").focus()
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    reached = {}
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = page.evaluate(ACTIVE)
        if now:
            reached.setdefault(now["key"], now["ring"])
        elif page.evaluate("() => document.activeElement === document.body"):
            break  # past the end of the page
    return reached


@pytest.mark.parametrize("slug", article_paths(PUBLIC))
def test_every_control_is_reachable_visible_and_usable_by_keyboard(page, site_url, slug):
    page.goto(f"{site_url}/posts/{slug}/")
    if not page.locator("figure.demo").count():
        pytest.skip("no figures")
    wait_ready(page)
    want = page.evaluate(CONTROLS)
    reached = tab_through(page)
    missing = [k for k in want if k not in reached]
    assert not missing, f"{slug}: Tab never reaches {missing[:5]}"
    page.evaluate("() => document.activeElement.blur()")
    for key in want:
        unfocused = page.evaluate(RING_OF, key)
        assert reached[key] != unfocused, f"{slug}: {key} looks the same focused and not ({unfocused})"

    # Usable: arrow keys move the first enabled slider and drop-down of each figure, and the figure
    # re-renders with the native outputs for what the page now holds.
    for fig in page.locator("figure.demo").all():
        name = fig.get_attribute("data-demo")
        for kind in ("input[type=range]", "select"):
            control = fig.locator(f".demo-controls {kind}:not([disabled])").first
            if not control.count():
                continue
            before_value = control.evaluate("el => el.value")
            before = int(fig.get_attribute("data-render-count"))
            control.focus()
            page.keyboard.press("ArrowRight" if kind.startswith("input") else "ArrowDown")
            if control.evaluate("el => el.value") == before_value:  # at its end: go the other way
                page.keyboard.press("ArrowLeft" if kind.startswith("input") else "ArrowUp")
            assert control.evaluate("el => el.value") != before_value, f"{slug} {name}: {kind} ignores the keys"
            page.wait_for_function(
                "([id, n]) => Number(document.getElementById(id).dataset.renderCount) > n",
                arg=[fig.get_attribute("id"), before], timeout=BOOT_MS)
            params = fig.evaluate(READ_PARAMS)
            settle(page, fig)
            assert_json_close(output_values(fig), REGISTRY[name].run(params)["outputs"], path=f"{name}{params}")


def settle(page, fig):
    """Wait until no request is in flight or queued (the last key press is drawn): a reply sends
    the queued value before the page yields, so no call in flight means none queued either."""
    page.wait_for_function("() => !window.headspace.busy()", timeout=BOOT_MS)
    worker_caught_up(page)


def test_inactive_controls_follow_their_switch(page, site_url):
    page.goto(f"{site_url}/posts/composition-and-subspaces/")
    fig = page.locator('figure.demo[data-demo="communication"]').first
    write2 = fig.locator('input[name="write2"]')
    note = fig.locator("#" + write2.get_attribute("id") + "-why")
    # Before Python is ready: one pair, so Writer 2 does nothing, is disabled and says why.
    assert write2.is_disabled() and note.is_visible()
    assert "two heads" in note.text_content()
    assert write2.get_attribute("aria-describedby") == note.get_attribute("id")
    # Two pairs chosen by keyboard: enabled at once, whatever Python is doing.
    fig.locator('select[name="pairs"]').focus()
    page.keyboard.press("ArrowDown")
    assert fig.evaluate(READ_PARAMS)["pairs"] == "two"
    assert write2.is_enabled() and not note.is_visible() and write2.get_attribute("aria-describedby") is None
    # Back to one pair: disabled again, its value kept and still sent.
    write2.evaluate("el => { el.value = '40'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    page.keyboard.press("ArrowUp")
    assert write2.is_disabled() and note.is_visible()
    params = fig.evaluate(READ_PARAMS)
    assert params["pairs"] == "one" and params["write2"] == 40
    wait_ready(page)
    settle(page, fig)
    params = fig.evaluate(READ_PARAMS)
    native = REGISTRY["communication"].run(params)["outputs"]
    assert_json_close(output_values(fig), native)
    assert printed(fig) == fig.evaluate(AS_PARSED, printed_for("communication", output_values(fig), native))


def test_hidden_symmetry_dual_waits_for_the_qk_view(page, site_url):
    page.goto(f"{site_url}/posts/composition-and-subspaces/")
    ov, qk = page.locator('figure.demo[data-demo="hidden-symmetry"]').all()[:2]
    assert ov.locator('input[name="dual"]').is_disabled()
    assert qk.locator('input[name="dual"]').is_enabled()      # placed with view="QK"
    assert "QK" in ov.locator('[data-role="inactive"]').text_content()


# Idle moments that never come: a figure off screen stays named but not wired until the reader reaches it.
NO_IDLE = "window.requestIdleCallback = () => 0;"
# Whether the figure a focused element is in was wired when the focus arrived (before any observer ran).
RECORD_FOCUS = "window.addEventListener('focusin', (e) => { window.wiredOnFocus = window.headspace.wired(e.target.closest('figure.demo')); });"


def test_tabbing_into_a_figure_off_screen_sets_it_up(page, site_url):
    """A keyboard reader tabs into the last figure's slider before the figure's turn came: the slider
    is enabled as built, the figure is wired by the time the focus arrives, and the arrow keys move it."""
    page.add_init_script(NO_IDLE)
    page.add_init_script(RECORD_FOCUS)
    page.goto(f"{site_url}/posts/composition-and-subspaces/")
    fig = page.locator("figure.demo").last
    slider = fig.locator(".demo-controls input[type=range]:not([disabled])").first
    assert fig.evaluate("f => window.headspace.wired(f)") is False
    assert slider.is_enabled()
    # Tab from a button placed just before the slider (nothing between them takes the focus).
    slider.evaluate("""el => { const b = document.createElement('button'); b.id = 'before-slider'; b.textContent = 'x';
        el.before(b); b.focus({preventScroll: true}); }""")
    page.keyboard.press("Tab")
    assert page.evaluate("() => [document.activeElement === document.querySelector('#before-slider + input'), window.wiredOnFocus]") == [True, True]
    page.evaluate("() => document.getElementById('before-slider').remove()")
    before_value, before = slider.evaluate("el => el.value"), int(fig.get_attribute("data-render-count"))
    page.keyboard.press("ArrowRight")
    if slider.evaluate("el => el.value") == before_value:  # at its end: the other way
        page.keyboard.press("ArrowLeft")
    assert slider.evaluate("el => el.value") != before_value
    page.wait_for_function("([id, n]) => Number(document.getElementById(id).dataset.renderCount) > n",
                           arg=[fig.get_attribute("id"), before], timeout=BOOT_MS)
    params = fig.evaluate(READ_PARAMS)
    settle(page, fig)
    assert_json_close(output_values(fig), REGISTRY[fig.get_attribute("data-demo")].run(params)["outputs"], path=str(params))


# Set a control to its index-th value as a reader would (a drop-down's option, a tick box, a slider's
# min or max) and tell the page, as the browser does.
SET_CONTROL = """([fig, name, index]) => {
  const el = fig.querySelector(`.demo-controls [name="${name}"]`);
  if (el.tagName === "SELECT") el.selectedIndex = index;
  else if (el.type === "checkbox") el.checked = Boolean(index);
  else el.value = String([el.min, el.max, el.defaultValue][index]);
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
}"""
DISABLED = "fig => Object.fromEntries([...fig.querySelectorAll('[data-off-when]')].map(el => [el.name, el.disabled]))"


def test_the_page_disables_what_python_says_does_nothing(page, site_url):
    """Every gated control of every demo (the gallery), through every value of each control that
    switches it: the page's applyActive, looking Python's table up, decides as ``Param.active`` does on
    the settings the page would send."""
    page.goto(f"{site_url}/gallery/")
    checked = 0
    for fig in page.locator("figure.demo").all():
        demo = REGISTRY[fig.get_attribute("data-demo")]
        gated = [p for p in demo.params if p.active_when]
        switches = {other for p in gated for other, _ in p.active_when}
        for name in sorted(switches):
            p = next(q for q in demo.params if q.name == name)
            count = len(p.options) if p.kind == "select" else 2 if p.kind == "checkbox" else 3
            for index in range(count):
                page.evaluate(SET_CONTROL, [fig.element_handle(), name, index])
                params = demo.resolve(fig.evaluate(READ_PARAMS))
                want = {q.name: not q.active(params) for q in gated}
                assert fig.evaluate(DISABLED) == want, f"{demo.name} at {params}"
                checked += 1
    assert checked >= 10

"""A page downloads the shipped models' files only as its figures read them: the manifest and
the configs at boot, then a model's weights or checkpoints when a reader's setting first needs
them, never the models nobody looks at."""

import pytest

from sitebuild import devserver
from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import output_values, set_control, wait_ready

pytestmark = pytest.mark.browser


def model_files_served() -> set[str]:
    return {path for path in devserver.Handler.bytes_served if path.startswith("/models/")}


def test_model_files_arrive_as_figures_need_them(page, site_url):
    devserver.Handler.bytes_served.clear()
    page.goto(f"{site_url}/embed/composition-scores/")
    wait_ready(page)
    at_boot = {"/models/manifest.json", "/models/attn-only-2l/config.json", "/models/attn-only-2l-rms/config.json"}
    assert model_files_served() == at_boot

    fig = page.locator("figure.demo")
    for count, (name, value, arrives) in enumerate([
            ("mode", "Q", {"/models/attn-only-2l/weights.npz"}),             # final weights of the default model
            ("step", 600, {"/models/attn-only-2l/checkpoints.npz"}),         # its checkpoints, once
            ("step", 1200, set()),
            ("model", "attn-only-2l-rms", {"/models/attn-only-2l-rms/checkpoints.npz",   # the other model:
                                            "/models/attn-only-2l-rms/weights.npz"})], start=1):  # its heads' roles
        before = model_files_served()
        set_control(fig, name, value)
        page.wait_for_function(f"() => document.querySelector('figure.demo').dataset.renderCount === '{count}'"
                               " || document.querySelector('figure.demo').dataset.status === 'error'")
        assert fig.get_attribute("data-status") == "ready", fig.locator('[data-role="error"]').text_content()
        assert model_files_served() - before == arrives, (name, value)
        params = page.evaluate("f => window.headspace.params(f)", fig.element_handle())
        assert_json_close(output_values(fig), REGISTRY["composition-scores"].run(params)["outputs"])

"""``python -m sitebuild.values``: print every article's values as JSON."""

import json

from . import compute

print(json.dumps(compute(), indent=1, ensure_ascii=False))

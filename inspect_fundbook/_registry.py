"""What the entry point `inspect_ai` loads: importing the task registers it as inspect_fundbook/desk."""

from ._task import desk  # noqa: F401
from ._scorer import desk_grade  # noqa: F401

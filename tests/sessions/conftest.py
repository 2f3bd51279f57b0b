from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sessions"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES

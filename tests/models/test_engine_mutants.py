"""The mutation check stays runnable (scripts/mutants.py, docs/performance.md "Mutation check"):
each mutant's text is found exactly once in the Mesa module it changes, and names a Mesa-only
module (the agents), never the typed core. Running the mutants themselves takes minutes: that is
the script's job, not the suite's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "mutants.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutants_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_one_place_of_a_mesa_module() -> None:
    mutants = _script().MUTANTS
    assert len(mutants) >= 4 and len({m.name for m in mutants}) == len(mutants)
    for mutant in mutants:
        assert mutant.path.startswith("src/speedtrap/agents/"), mutant.name
        text = (ROOT / mutant.path).read_text()
        assert text.count(mutant.old) == 1, f"{mutant.name}: {mutant.old!r} in {mutant.path}"
        assert mutant.new != mutant.old
    names = {m.name for m in mutants}
    assert {"repairs-capped-at-1", "repair-limit-off-by-one"} <= names


def test_the_script_lists_its_mutants() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--list"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.count("\n") == len(_script().MUTANTS)

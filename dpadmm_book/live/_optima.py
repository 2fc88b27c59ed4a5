"""The reference optima the site ships for its live panels' problems (:data:`dpadmm_lite.problems.SHIPPED_OPTIMA`).

Every panel is run natively at its defaults and at each option of each drop-down; each problem whose optimum a
run asks for is solved by the library's own solver and written, with its :func:`~dpadmm_lite.problems.fingerprint`,
to ``dpadmm_lite/data/reference_optima.npz``. In the browser :meth:`~dpadmm_lite.problems.Problem.reference_optimum`
reads it instead of solving again. ``tests/test_live_wasm_paths.py`` checks that the file holds every such problem
and that each optimum is what the solver gives now. Rebuild with ``python -m dpadmm_book.live._optima`` when a
panel's problem changes.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np

from dpadmm_lite import problems
from dpadmm_lite.algorithms import liu2022


def panel_problems() -> list[problems.Problem]:
    """The problems whose optimum the live panels ask for (defaults, and each drop-down option), each once."""
    from . import PANELS, run_panel

    seen: dict[int, problems.Problem] = {}
    originals = {cls: cls.reference_optimum for cls in (problems.Problem, liu2022.RidgeProblem)}

    def recording(cls):
        def reference_optimum(self):
            seen.setdefault(id(self), self)
            return originals[cls](self)
        return reference_optimum

    try:
        for cls in originals:
            cls.reference_optimum = recording(cls)
        for name, panel in PANELS.items():
            settings = [{}] + [{c["name"]: option[1] if isinstance(option, list) else option}
                               for c in panel["controls"] if c["kind"] == "select" for option in c["options"]]
            for values in settings:
                run_panel(name, values)
    finally:
        for cls, method in originals.items():
            cls.reference_optimum = method
    unique: dict[bytes, problems.Problem] = {}  # one per fingerprint (a panel may rebuild the same problem)
    for p in seen.values():
        exact, sums = problems.fingerprint(p)
        unique.setdefault(json.dumps(exact, sort_keys=True).encode() + sums.tobytes(), p)
    return list(unique.values())


def write_optima(path: Path | None = None) -> Path:
    """Solve every panel problem (:func:`panel_problems`) and write the table; returns its path."""
    path = Path(path or resources.files("dpadmm_lite").joinpath(problems.SHIPPED_OPTIMA))
    entries, arrays = [], {}
    for i, p in enumerate(panel_problems()):
        exact, sums = problems.fingerprint(p)
        optimum = p.reference_optimum()
        entries.append({"problem": exact, "value": float(optimum.value), "iterations": int(optimum.iterations),
                        "residual": float(optimum.residual), "hessians": int(optimum.hessians)})
        arrays[f"x{i}"], arrays[f"sums{i}"] = np.asarray(optimum.x, float), sums
    np.savez_compressed(path, entries=np.array(json.dumps(entries, sort_keys=True)), **arrays)
    return path


if __name__ == "__main__":
    print(write_optima())

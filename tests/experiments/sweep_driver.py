"""A minimal front end for the fault tests: ``python sweep_driver.py EXPERIMENT.toml RESULTS_DIR
EXECUTOR`` runs the experiment through the runner with :func:`sweep_models.sleepy_summary` (2
workers for ``processes``). An interrupt at any moment, from its first import on, ends it with one
line on stderr and status 130; a refused store or spec with one ``error:`` line and status 2."""

import signal
import sys

# Until the imports are done an interrupt is only noted: CPython reports and drops a KeyboardInterrupt
# raised inside a callback its import machinery runs (a weak reference's), so one that landed there
# was lost and the sweep ran to its end. Noted here, it is raised once the imports are done.
_NOTED: list[int] = []
signal.signal(signal.SIGINT, lambda signum, frame: _NOTED.append(signum))


def main(argv: list[str]) -> int:
    try:
        from sweep_models import sleepy_summary

        from speedtrap.config.experiment import Experiment
        from speedtrap.experiments import run_experiment

        signal.signal(signal.SIGINT, signal.default_int_handler)
        if _NOTED:
            raise KeyboardInterrupt
        spec = Experiment.from_toml(argv[0])
        workers = 2 if argv[2] == "processes" else None
        try:
            run_experiment(
                spec,
                executor=argv[2],
                workers=workers,
                results_dir=argv[1],
                progress=False,
                model=sleepy_summary,
            )
        except ValueError as exc:  # a refused store (StoreError) among them
            print(f"error: {exc}", file=sys.stderr)
            return 2
    except KeyboardInterrupt as exc:
        print(f"interrupted: {exc or 'before the sweep started'}", file=sys.stderr)
        return 130
    print("done", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

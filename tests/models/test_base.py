from speedtrap.models.base import EventModel


def test_event_model_has_no_unit_step_loop() -> None:
    model = EventModel(rng=1)
    model.run_until(10.0)
    assert model.steps == 0
    assert model.time == 10.0


def test_event_model_runs_scheduled_bound_methods_in_time_order() -> None:
    model = EventModel(rng=1)
    seen: list[float] = []

    class Probe:
        def fire(self) -> None:
            seen.append(model.time)

    probe = Probe()
    model.schedule_event(probe.fire, at=2.5)
    model.schedule_event(probe.fire, at=0.5)
    model.run_until(3.0)
    assert seen == [0.5, 2.5]

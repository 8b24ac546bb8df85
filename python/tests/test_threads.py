"""The GIL is released while cort runs; one session serves many Python threads."""
import threading
import time

import numpy as np

import cort as ort
from conftest import add_model, slow_model, session


def test_two_python_threads_run_concurrently():
    """While thread A is inside a long run, thread B completes runs of the same session. If the GIL
    were held during the C call, B could not finish anything in the middle of A's run."""
    s = session(slow_model(n=200), threads=1)
    x = np.ones((256, 256), np.float32)
    span = []
    started = threading.Event()

    def long_run():
        started.set()
        t0 = time.perf_counter()
        s.run(None, {"t0": x})
        span.extend((t0, time.perf_counter()))

    quick = session(add_model(), threads=1)
    a = np.ones((2, 4), np.float32)
    done_at = []
    t = threading.Thread(target=long_run)
    t.start()
    started.wait()
    while t.is_alive():
        quick.run(None, {"a": a, "b": a})
        done_at.append(time.perf_counter())
    t.join()
    t0, t1 = span
    lo, hi = t0 + 0.2 * (t1 - t0), t1 - 0.2 * (t1 - t0)
    inside = [d for d in done_at if lo < d < hi]
    assert len(inside) > 0, (t1 - t0, len(done_at))


def test_python_keeps_running_during_a_run():
    """A pure-Python thread is never stalled for the length of a run."""
    s = session(slow_model(n=150), threads=1)
    x = np.ones((256, 256), np.float32)
    gaps = []
    stop = threading.Event()

    def spin():
        last = time.perf_counter()
        worst = 0.0
        while not stop.is_set():
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now
        gaps.append(worst)

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.02)
        t0 = time.perf_counter()
        s.run(None, {"t0": x})
        dt = time.perf_counter() - t0
    finally:
        stop.set()
        t.join()
    assert gaps[0] < 0.5 * dt, (gaps[0], dt)


def test_many_threads_one_session():
    s = session(add_model(), threads=2)
    errors = []

    def work(k):
        try:
            for i in range(50):
                a = np.full((3, 4), k, np.float32)
                b = np.full((3, 4), i, np.float32)
                (c,) = s.run(None, {"a": a, "b": b})
                assert np.all(c == k + i)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_sessions_created_concurrently():
    model = add_model()
    made, errors = [], []

    def make():
        try:
            made.append(session(model))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=make) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(made) == 8
    x = np.ones((1, 4), np.float32)
    assert all(np.array_equal(m.run(None, {"a": x, "b": x})[0], 2 * x) for m in made)


def test_terminate_from_another_thread():
    s = session(slow_model(n=400), threads=1)
    x = np.ones((256, 256), np.float32)
    ro = ort.RunOptions()
    timer = threading.Timer(0.05, lambda: setattr(ro, "terminate", True))
    timer.start()
    t0 = time.perf_counter()
    try:
        s.run(None, {"t0": x}, ro)
        finished = True
    except ort.capi.onnxruntime_pybind11_state.Fail as e:
        finished = False
        assert e.code == "CANCELLED"
    timer.join()
    if not finished:
        assert time.perf_counter() - t0 < 5

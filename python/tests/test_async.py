"""run_async: onnxruntime's callback(results, user_data, err) contract on cort's worker threads."""
import gc
import threading
import time

import numpy as np
import pytest

import cort as ort
from conftest import add_model, slow_model, session


class Box:
    def __init__(self):
        self.done = threading.Event()
        self.calls = 0
        self.results = None
        self.err = None
        self.thread = None


def cb(results, box, err):
    box.calls += 1
    box.results, box.err = results, err
    box.thread = threading.get_ident()
    box.done.set()


def test_run_async_basic(add_session):
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    box = Box()
    assert add_session.run_async(None, {"a": a, "b": a}, cb, box) is None
    assert box.done.wait(10)
    assert box.err == "" and box.calls == 1
    assert len(box.results) == 1 and np.array_equal(box.results[0], 2 * a)
    assert box.thread != threading.get_ident()
    assert type(box.results[0].base).__name__ == "_CortBuffer"


def test_run_async_output_names_and_run_options(add_session):
    a = np.ones((1, 4), np.float32)
    box = Box()
    add_session.run_async(["c"], {"a": a, "b": a}, cb, box, ort.RunOptions())
    assert box.done.wait(10) and box.err == ""


@pytest.mark.parametrize("feed, outputs, needle", [
    ({"a": np.ones((2, 4), np.float32), "b": np.ones((2, 4), np.int32)}, None, "'b'"),        # element type
    ({"a": np.ones((2, 4), np.float32), "b": np.ones((2, 4, 1), np.float32)}, None, "rank"),  # rank
    ({"a": np.ones((2, 4), np.float32), "b": np.ones((2, 5), np.float32)}, None, "dimension 1"),
    ({"a": np.ones((2, 4), np.float32), "nope": np.ones((2, 4), np.float32)}, None, "nope"),  # unknown input
    ({"a": np.ones((2, 4), np.float32), "b": np.ones((2, 4), np.float32)}, ["zz"], "'zz'"),   # unknown output
])
def test_run_async_refuses_what_it_can_check(add_session, feed, outputs, needle):
    """What a run can check before it starts is raised by run_async itself, and no callback follows."""
    box = Box()
    with pytest.raises(Exception) as info:
        add_session.run_async(outputs, feed, cb, box)
    assert needle in str(info.value)
    # a later accepted run calls back; the refused one never does
    a = np.ones((1, 4), np.float32)
    ok = Box()
    add_session.run_async(None, {"a": a, "b": a}, cb, ok)
    assert ok.done.wait(10) and ok.err == ""
    assert box.calls == 0


def test_run_async_keeps_inputs_alive():
    s = session(slow_model(n=60), threads=1)
    x = np.full((256, 256), 2.0, np.float32)
    expected = s.run(None, {"t0": x})[0]
    box = Box()
    y = x.copy()
    s.run_async(None, {"t0": y}, cb, box)
    del y
    gc.collect()
    np.ones((512, 512), np.float32)   # reuse freed memory if the input had been dropped
    assert box.done.wait(30) and box.err == ""
    assert np.allclose(box.results[0], expected)


def test_many_runs_in_flight(add_session):
    n = 64
    lock = threading.Lock()
    seen = {}
    all_done = threading.Event()

    def count(results, k, err):
        with lock:
            seen[k] = seen.get(k, 0) + 1
            ok = err == "" and np.all(results[0] == k + 1)
            seen.setdefault("bad", 0)
            seen["bad"] += 0 if ok else 1
            if sum(v for key, v in seen.items() if key != "bad") == n:
                all_done.set()

    for k in range(n):
        a = np.full((2, 4), k, np.float32)
        add_session.run_async(None, {"a": a, "b": np.ones((2, 4), np.float32)}, count, k)
    assert all_done.wait(30)
    assert seen["bad"] == 0 and all(seen[k] == 1 for k in range(n))


def test_release_session_in_callback():
    holder = [session(slow_model(n=10), threads=1)]
    box = Box()

    def drop(results, user_data, err):
        holder.clear()   # drops the last Python reference: cort_session_release on a cort thread
        gc.collect()
        cb(results, user_data, err)

    holder[0].run_async(None, {"t0": np.ones((256, 256), np.float32)}, drop, box)
    assert box.done.wait(30) and box.err == "" and not holder
    time.sleep(0.05)
    # the runtime is still healthy
    s = session(add_model())
    x = np.ones((1, 4), np.float32)
    assert np.array_equal(s.run(None, {"a": x, "b": x})[0], 2 * x)


def test_session_dropped_right_after_submit():
    s = session(slow_model(n=20), threads=1)
    box = Box()
    s.run_async(None, {"t0": np.ones((256, 256), np.float32)}, cb, box)
    del s
    gc.collect()
    assert box.done.wait(30) and box.err == "" and box.results[0].shape == (256, 256)


def test_terminate_async_run():
    s = session(slow_model(n=400), threads=1)
    ro = ort.RunOptions()
    box = Box()
    s.run_async(None, {"t0": np.ones((256, 256), np.float32)}, cb, box, ro)
    ro.terminate = True
    assert box.done.wait(30)
    assert box.err == "" or box.err   # either it finished first or it was cancelled
    if box.err:
        assert box.results == []


def test_callback_exception_does_not_break_anything(add_session, capfd):
    done = threading.Event()

    def boom(results, user_data, err):
        done.set()
        raise ValueError("boom from callback")

    a = np.ones((2, 4), np.float32)
    add_session.run_async(None, {"a": a, "b": a}, boom, None)
    assert done.wait(10)
    time.sleep(0.1)
    assert "boom from callback" in capfd.readouterr().err
    box = Box()
    add_session.run_async(None, {"a": a, "b": a}, cb, box)
    assert box.done.wait(10) and box.err == ""


def test_callback_must_be_callable(add_session):
    a = np.ones((2, 4), np.float32)
    with pytest.raises(TypeError):
        add_session.run_async(None, {"a": a, "b": a}, None, None)

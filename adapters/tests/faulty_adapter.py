"""An adapter that misbehaves on purpose, one fault per case, chosen by the case's seed.

It computes `spmm` correctly with numpy unless the seed names a fault (FAULTS below). The process
system's tests send it a sequence of cases and check that each fault gets its own status and that
the run goes on with the next case. Options:
  --fault NAME            every case commits that fault instead (for suites, whose seeds are random);
  --startup-delay S       sleep S seconds before the hello line (a framework's imports);
  --pid-file PATH         append this process's pid to PATH at start (and its child's, with --with-child);
  --with-child            start a child process (in the adapter's process group) that sleeps for an hour;
  --fail-restarts MARKER  start normally when MARKER does not exist (and create it), else exit with
                          code 5 before the hello line: an adapter that cannot be restarted.
"""

import argparse
import os
import subprocess
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gnncheck_adapter as kit  # noqa: E402

FAULTS = {
    0: "correct",
    1: "crash",           # SIGSEGV mid-case
    2: "hang",            # never answers
    3: "exit",            # exits with code 3 mid-case
    4: "garbage_file",    # output file is not a .npy
    5: "truncated_file",  # valid header, half the data
    6: "missing_file",    # result ok but no output file
    7: "wrong_shape",
    8: "wrong_dtype",     # float32 for a float64 case
    9: "nan",
    10: "no_result",      # tensors but no result.json
    11: "garbage_result", # result.json is not JSON
    12: "error",          # the system reports an error
    13: "unsupported",
    14: "chatter",        # prints on stdout from Python and from the C level, answers correctly
    15: "wrong_done",     # answers for another directory
    16: "bad_status",     # result.json with an unknown status
    17: "huge_header",    # output .npy whose header claims a 50 GB array (the data is not there)
    18: "growing_file",   # keeps appending to a file in the case directory, never answers
    19: "stderr_flood",   # writes 300 MB to stderr, then answers correctly
    20: "stdout_flood",   # prints 300 MB of lines that are not protocol lines, then answers
    21: "leak",           # answers correctly but keeps 8 MiB more of memory after every case
    22: "balloon",        # allocates memory without bound, never answers
    23: "exit_after_answer",  # answers correctly, then exits (the next case finds it gone)
    24: "device_leak",    # answers correctly, reports 8 MiB more live_bytes (device memory) every case
    25: "device_steady",  # answers correctly, reports the same 1 GiB of live_bytes every case
    26: "creep",          # answers correctly, keeps 96 KiB more resident memory after every case
}
DEVICE_LIVE = [1 << 30]
FAULT_BY_NAME = {name: seed for seed, name in FAULTS.items()}
ALWAYS = None  # set by --fault
LEAKED = []


def spmm(case):
    g = case.graph
    rows, cols = g.row_of_edge, g.col_idx
    x = case.inputs["x"]
    y = np.zeros((g.n_dst, x.shape[1]), dtype=x.dtype)
    np.add.at(y, rows, x[cols])
    answer = {"outputs": {"y": y}}
    if case.wants_gradients:
        gy = case.grad_outputs["y"]
        gx = np.zeros_like(x)
        np.add.at(gx, cols, gy[rows])
        answer["gradients"] = {"x": gx}
    return answer


def answer(directory, protocol_out):
    case = kit.read_case(directory)
    fault = ALWAYS or FAULTS.get(case.seed, "correct")
    out_file = os.path.join(directory, case.outputs[0]["file"])
    result = {"status": "ok"}
    if fault == "crash":
        sys.stderr.write("faulty adapter: about to dereference a null pointer\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if fault == "hang":
        time.sleep(3600)
    if fault == "exit":
        sys.stderr.write("faulty adapter: giving up\n")
        sys.stderr.flush()
        os._exit(3)
    if fault == "growing_file":
        with open(os.path.join(directory, "debug.log"), "wb") as f:
            chunk = b"x" * (1 << 20)
            while True:
                f.write(chunk)
                f.flush()
    if fault == "stderr_flood":
        line = b"faulty adapter: warning: something is off " + b"." * 980 + b"\n"
        for _ in range(300 * 1024):
            os.write(2, line)
        sys.stderr.write("faulty adapter: end of the flood\n")
    if fault == "stdout_flood":
        line = "progress " + "." * 1014 + "\n"
        for _ in range(300 * 1024):
            protocol_out.write(line)
        protocol_out.flush()
    if fault in ("leak", "creep"):
        block = bytearray((8 << 20) if fault == "leak" else (96 << 10))
        for k in range(0, len(block), 4096):  # touch every page so that it is resident
            block[k] = 1
        LEAKED.append(block)
    if fault == "balloon":
        sys.stderr.write("faulty adapter: allocating without bound\n")
        sys.stderr.flush()
        while True:
            block = bytearray(16 << 20)
            for k in range(0, len(block), 4096):
                block[k] = 1
            LEAKED.append(block)
    if fault == "chatter":
        print("a library prints here")
        sys.stdout.flush()
        os.write(1, b"and C code writes here too\n")
    ans = spmm(case)
    kit.write_tensors(case, ans)
    if fault == "garbage_file":
        with open(out_file, "wb") as f:
            f.write(b"this is not a numpy file")
    elif fault == "truncated_file":
        size = os.path.getsize(out_file)
        with open(out_file, "r+b") as f:
            f.truncate(size - 8)
    elif fault == "missing_file":
        os.remove(out_file)
    elif fault == "wrong_shape":
        np.save(out_file, ans["outputs"]["y"][:, :-1])
    elif fault == "wrong_dtype":
        np.save(out_file, ans["outputs"]["y"].astype(np.float32))
    elif fault == "nan":
        y = ans["outputs"]["y"].copy()
        y[1, 2] = np.nan
        np.save(out_file, y)
    elif fault == "huge_header":
        # A valid .npy header for a 100000 x 62500 float64 array (50 GB) followed by 64 bytes.
        header = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 62500), }"
        header += " " * (117 - len(header)) + "\n"
        with open(out_file, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
            f.write(b"\0" * 64)
    elif fault == "error":
        result = {"status": "error", "message": "out of device memory (simulated)"}
    elif fault == "unsupported":
        result = {"status": "unsupported", "message": "this system has no kernel for this width"}
    elif fault == "bad_status":
        result = {"status": "fine"}
    if fault == "garbage_result":
        with open(os.path.join(directory, "result.json"), "w") as f:
            f.write("{status: ok")
    elif fault != "no_result":
        live = None
        if fault in ("device_leak", "device_steady"):
            if fault == "device_leak":
                DEVICE_LIVE[0] += 8 << 20
            live = DEVICE_LIVE[0]
        kit.write_result(directory, result["status"], result.get("message", ""), live_bytes=live)
    done = directory + "-elsewhere" if fault == "wrong_done" else directory
    protocol_out.write("gnncheck-done " + done + "\n")
    protocol_out.flush()
    if fault == "exit_after_answer":
        os._exit(0)


def main():
    global ALWAYS
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault", choices=list(FAULT_BY_NAME))
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--pid-file")
    parser.add_argument("--with-child", action="store_true")
    parser.add_argument("--fail-restarts")
    args = parser.parse_args()
    ALWAYS = args.fault
    if args.fail_restarts:
        if os.path.exists(args.fail_restarts):
            sys.stderr.write("faulty adapter: refusing to start a second time\n")
            sys.exit(5)
        open(args.fail_restarts, "w").close()
    pids = [os.getpid()]
    if args.with_child:
        # Carries the pid file's path in its command line, so a test can look for it in /proc.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", args.pid_file or ""])
        pids.append(child.pid)
    if args.pid_file:
        with open(args.pid_file, "a") as f:
            f.write("".join("%d\n" % pid for pid in pids))
    time.sleep(args.startup_delay)
    protocol_out = sys.stdout
    protocol_out.write('gnncheck-hello {"protocol": 1, "name": "faulty", "targets": {"spmm": "float64"}}\n')
    protocol_out.flush()
    for line in sys.stdin:
        answer(line.rstrip("\n"), protocol_out)


if __name__ == "__main__":
    main()

"""Tests of bench/pool.py and bench/pooled.sh --report (make benchtest):
the pooled medians of known runs, and exit 2 with a message, no report,
for input they cannot pool."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
POOL = os.path.join(HERE, "pool.py")
POOLED = os.path.join(HERE, "pooled.sh")


def line(on_off, trace_on, on_cpu=1000.0, kgo_cpu=1500.0):
    return (f"BenchmarkProduce-2 \t 40000\t 123 ns/op\t {kgo_cpu} kgo-cpu-ns/rec\t {on_cpu} on-cpu-ns/rec\t"
            f" {on_cpu} off-cpu-ns/rec\t {on_cpu * 1.1} trace-cpu-ns/rec\t 1.05 on/kgo\t 1.0 off/kgo\t"
            f" 1.0 trace/kgo\t {on_off} on/off\t {trace_on} trace/on\n")


def run(args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


class PoolTest(unittest.TestCase):
    def write(self, d, name, text):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_medians(self):
        with tempfile.TemporaryDirectory() as d:
            # Ratios 0.90, 1.00, 1.20 and 0.95, 0.97, 0.99 in a shuffled order:
            # the medians are 1.000 and 0.970 whatever the order.
            runs = self.write(d, "runs.txt", "goos: linux\n" + line(1.2, 0.99) + line(0.9, 0.95) + "PASS\n" + line(1.0, 0.97))
            p = run([sys.executable, POOL, runs])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("3 runs;", p.stdout)
            rows = {l.split()[0]: l.split()[1] for l in p.stdout.splitlines()[1:] if l.strip()}
            self.assertEqual(rows["on/off"], "1.000")
            self.assertEqual(rows["trace/on"], "0.970")
            cpu = [l for l in p.stdout.splitlines() if l.startswith("cpu on/kgo")]
            self.assertTrue(cpu and cpu[0].split()[2] == "1.500", p.stdout)

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {
                "missing": (os.path.join(d, "nope.txt"), "nope.txt"),
                "no runs": (self.write(d, "empty.txt", "goos: linux\nPASS\n"), "no BenchmarkProduce runs"),
                "no trace/on": (self.write(d, "short.txt", "BenchmarkProduce-2 \t 10\t 1.0 on/off\n"), "short.txt:1: a BenchmarkProduce line without the trace/on ratio"),
                "zero CPU": (self.write(d, "zero.txt", line(1.0, 0.97, on_cpu=0)), "zero.txt:1: on-cpu-ns/rec is 0.0"),
            }
            for name, (path, want) in cases.items():
                with self.subTest(name):
                    p = run([sys.executable, POOL, path])
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(want, p.stderr)
                    self.assertEqual(p.stdout, "")

    def test_report(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "runs-64.txt", "# commit abc1234\n# round 1, 64 partitions, 2026-12-02 10:00:00 UTC, load 1.0 1.0 1.0\n" + line(1.0, 0.97))
            self.write(d, "runs-8.txt", "# round 1, 8 partitions, 2026-12-02 10:01:00 UTC, load 1.0 1.0 1.0\n" + line(1.0, 0.97))
            p = run(["bash", POOLED, "--report", d])
            self.assertEqual(p.returncode, 0, p.stderr)
            # Partition counts in numeric order, each with its commit (or that
            # it was not recorded) and records a client.
            self.assertLess(p.stdout.index("## 8 partitions"), p.stdout.index("## 64 partitions"))
            self.assertIn("- commit abc1234", p.stdout)
            self.assertIn("- commit: not recorded", p.stdout)
            self.assertIn("- records a run a client: 80000", p.stdout)
        with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as bad:
            self.write(bad, "runs-1.txt", "BenchmarkProduce-2 \t 10\t 1.0 on/off\n")
            for args, want in [(["--report", os.path.join(empty, "nope")], "want one directory"),
                               (["--report", empty], "no runs-*.txt files"),
                               (["--report", bad], "runs-1.txt:1: a BenchmarkProduce line without the trace/on ratio"),
                               (["7"], "RUNS '7'")]:
                with self.subTest(args):
                    p = run(["bash", POOLED] + args)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(want, p.stderr)
                    self.assertEqual(p.stdout, "")

class ValuesTest(unittest.TestCase):
    def test_values(self):
        # --values: each list's median and an interval around it; nulls
        # skipped; an empty list has n 0; not a list of numbers: exit 2.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "v.json")
            with open(path, "w") as f:
                f.write('{"a": [1.2, 0.9, 1.0, null], "b": [], "c": [2, 2, 2]}')
            p = run([sys.executable, POOL, "--values", path])
            self.assertEqual(p.returncode, 0, p.stderr)
            import json
            out = json.loads(p.stdout)
            self.assertEqual(out["a"]["n"], 3)
            self.assertAlmostEqual(out["a"]["median"], 1.0)
            self.assertLessEqual(out["a"]["lo"], 1.0)
            self.assertGreaterEqual(out["a"]["hi"], 1.0)
            self.assertEqual((out["a"]["min"], out["a"]["max"]), (0.9, 1.2))
            self.assertEqual(out["b"], {"n": 0})
            self.assertEqual((out["c"]["lo"], out["c"]["hi"]), (2, 2))
            with open(path, "w") as f:
                f.write('{"a": ["x"]}')
            p = run([sys.executable, POOL, "--values", path])
            self.assertEqual(p.returncode, 2)
            self.assertIn("want a list of numbers", p.stderr)


if __name__ == "__main__":
    unittest.main()

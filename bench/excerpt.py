#!/usr/bin/env python3
"""One partition of a kcheck trace, alone: its events, what the application
was told of its records, its read-back, the InitProducerId and the
Disconnects of the connections its requests rode; the partition renumbered
0 and the header's partitions 1, its config saying what the excerpt is.

    bench/excerpt.py TRACE PARTITION WHAT > EXCERPT

WHAT goes into config.excerpt (where the run came from). kcheck verify
judges the excerpt as it judges the partition in the whole trace, but for
what needs the other partitions (a request's other batches)."""
import json
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: bench/excerpt.py TRACE PARTITION WHAT")
    path, part, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines = open(path, encoding="utf-8").read().splitlines()
    h = json.loads(lines[0])
    h["partitions"] = 1
    h.setdefault("config", {})["excerpt"] = "partition %d alone, renumbered 0: %s" % (part, what)
    evs = [json.loads(l) for l in lines[1:]]
    nodes = {e["node"] for e in evs if e.get("p") == part and e["ev"] in ("SendNew", "Resend")}
    out = [json.dumps(h, separators=(",", ":"))]
    i = 1
    sent = {}  # batch -> its SendNew's record count
    for e in evs:
        if e["ev"] == "SendNew":
            sent[e["b"]] = len(e["recs"])
        if e["ev"] == "InitProducerId" or e.get("p") == part or (e["ev"] == "Disconnect" and e["node"] in nodes):
            e["i"] = i
            # a ToldRun or ToldBatch line takes a number for each of its
            # records, a ToldBatch's its batch's SendNew's (tracer/FORMAT.md)
            i += len(e["recs"]) if e["ev"] == "ToldRun" else sent[e["b"]] if e["ev"] == "ToldBatch" else 1
            if "p" in e:
                e["p"] = 0
            out.append(json.dumps(e, separators=(",", ":")))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

# Independent computation of job.JointSeed's commitments and fold (see job/reveal.go).
import hashlib, json, struct
def lp(b): return struct.pack(">I", len(b)) + b
def commit(job, party, rnd, c):
    return hashlib.sha256(lp(b"cohort/job/seed-commit/v1") + lp(job.encode()) + lp(party.encode()) + struct.pack(">Q", rnd) + lp(c)).hexdigest()
def fold(job, rnd, ops):
    m = lp(b"cohort/job/joint-seed/v1") + lp(job.encode()) + struct.pack(">Q", rnd) + struct.pack(">I", len(ops))
    for p, c in ops: m += lp(p.encode()) + lp(c)
    return hashlib.sha256(m).hexdigest()
cases = []
for job, rnd, parties in [("job-kat", 0, ["ann", "bob", "cat"]), ("7f3a9c", 2, ["solo"])]:
    ops = [(p, bytes((32*i + k) % 256 for k in range(32))) for i, p in enumerate(parties)]
    cases.append({"job": job, "round": rnd,
        "parties": [{"party": p, "contribution": c.hex(), "commitment": commit(job, p, rnd, c)} for p, c in ops],
        "seed": fold(job, rnd, ops)})
print(json.dumps({"source": "computed with Python's hashlib by the script in job/testdata/joint-seed.py, apart from the Go code", "cases": cases}, indent=2))

"""Checks that an archive packed from a host binary holds exactly the code
objects that clang-offload-bundler --unbundle gets from the binary's bundles,
byte for byte: clang's own bundler is the reference, not the project's codec.

usage: unbundle_compare.py BINARY ARCHIVE NAME WORKDIR
  (kpack and clang-offload-bundler must be on PATH; archive keys NAME#<bundle>)

Prints one line per difference and a summary line; exits 1 on a difference.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

binary, archive, name, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def kpack_json(*args):
    return json.loads(subprocess.check_output(["kpack"] + list(args)))


info = kpack_json("inspect", "--json", binary)
section = info["hip_fatbin"]
listing = kpack_json("ls", "--json", archive)
in_archive = {(e["key"], e["arch"]) for e in listing["entries"]}


# ROCm 5 wrote the (empty) host entry as "host-x86_64-unknown-linux", a
# three-part triple that clang 22's bundler rejects as soon as it reads that
# entry. A same-length four-part ID leaves every offset and payload as is.
OLD_HOST_ID = b"host-x86_64-unknown-linux"
NEW_HOST_ID = b"host-x86_64-pc-linux-gnu-"


def with_valid_host_id(data):
    if not data.startswith(b"__CLANG_OFFLOAD_BUNDLE__"):
        return data  # CCOB: clang reads it as it is
    at = data.find(OLD_HOST_ID, 0, 4096)
    if at < 0 or data[at + len(OLD_HOST_ID):at + len(OLD_HOST_ID) + 1] == b"-":
        return data
    return data[:at] + NEW_HOST_ID + data[at + len(OLD_HOST_ID):]


def compare_bundle(index, bundle):
    """Unbundles one bundle with clang and compares every code object with
    `kpack extract`; returns (compared, problems)."""
    # Where the bundle lies comes from `kpack inspect`; what it holds is
    # read by clang's bundler alone.
    start = section["offset"] + bundle["address"] - section["address"]
    with open(binary, "rb") as f:
        f.seek(start)
        data = f.read(bundle["size"])
    prefix = os.path.join(work, "b%d" % index)
    with open(prefix + ".bundle", "wb") as f:
        f.write(with_valid_host_id(data))
    objects = bundle["code_objects"]
    outputs = ["%s.%d.co" % (prefix, i) for i in range(len(objects))]
    subprocess.check_call(
        ["clang-offload-bundler", "--unbundle", "--type=o",
         "--input=" + prefix + ".bundle",
         "--targets=" + ",".join(c["id"] for c in objects)]
        + ["--output=" + o for o in outputs])
    problems = []
    key = "%s#%d" % (name, index)
    for obj, out in zip(objects, outputs):
        with open(out, "rb") as f:
            expected = f.read()
        got = subprocess.run(["kpack", "extract", archive, key, obj["target"],
                              "-o", "-"], stdout=subprocess.PIPE).stdout
        if got != expected:
            problems.append(
                "differs: %s %s (archive %d bytes, bundler %d bytes)"
                % (key, obj["target"], len(got), len(expected)))
        os.remove(out)
    os.remove(prefix + ".bundle")
    return len(objects), problems


# Two workers: the machines running the suite are small and shared.
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    results = list(pool.map(lambda a: compare_bundle(*a),
                            enumerate(info["bundles"])))

expected_keys = {("%s#%d" % (name, i), c["target"])
                 for i, b in enumerate(info["bundles"])
                 for c in b["code_objects"]}
problems = [p for _, ps in results for p in ps]
problems += ["missing from the archive: %s %s" % k
             for k in sorted(expected_keys - in_archive)]
problems += ["not in the binary: %s %s" % k
             for k in sorted(in_archive - expected_keys)]
for p in problems:
    print(p)
compared = sum(n for n, _ in results)
print("%d bundles, %d code objects compared, %d archive entries, %d problems"
      % (len(results), compared, len(in_archive), len(problems)))
sys.exit(1 if problems else 0)

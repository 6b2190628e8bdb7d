# Running Windows programs under wine64 on the stand-in amdhip64.dll (the HIP
# runtime's rules, test/hip-standin) and rocm_kpack.dll of the Windows build
# (cmake/windows; scripts/test.sh builds it before the lit suite), for the
# lit.local.cfg of test/lit/windows and test/lit/windows-artifacts:
# configure(config, lit_config) adds %win_runtime and %wine and the wine
# environment. A missing build stops the run: the tests are never skipped
# for it.
import atexit
import os
import subprocess

_started = set()


def configure(config, lit_config):
    win_build = os.path.abspath(lit_config.params.get("kpack_windows_build",
                                                      config.kpack_windows_build))
    win_dlls = [os.path.join(win_build, "bin", d) for d in ("amdhip64.dll", "rocm_kpack.dll")]
    for f in win_dlls:
        if not os.path.exists(f):
            lit_config.fatal("%s not found: build the Windows runtime and stand-in first "
                             "(bash cmake/windows/run-tests.sh, or --param kpack_windows_build=DIR)" % f)
    # %win_runtime: the two DLLs, copied beside the programs that import them.
    config.substitutions.insert(0, ("%win_runtime", " ".join(win_dlls)))

    wine64 = config.kpack_files["KPACK_FILE_WINE64"][0]
    wineserver = config.kpack_programs["wineserver"][0]
    # One wine prefix for this build's lit runs (creating one takes ~30 s), its
    # wineserver kept up (-p60) between the programs, so that a program starts in
    # ~0.3 s, and stopped (-k, this prefix's server only) when lit exits; the
    # tests make their own directories. The server gets no file descriptor of
    # lit's (a pipe it held open would keep lit's reader waiting). Both
    # directories share the prefix; its server is started once per lit run.
    prefix = os.path.join(config.kpack_obj_root, "test", "lit", "wineprefix")
    # LC_ALL: wine stores Windows file names as Unix ones in the locale's
    # character set; the C locale has no room for non-ASCII names.
    wine_env = {"WINEPREFIX": prefix, "WINEDEBUG": "-all",
                "WINEDLLOVERRIDES": "mscoree,mshtml=", "LC_ALL": "C.UTF-8"}
    config.environment.update(wine_env)
    config.substitutions.insert(0, ("%wine", wine64))
    if prefix in _started:
        return
    _started.add(prefix)
    env = dict(config.environment)
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(os.path.join(prefix, "system.reg")):
        if subprocess.run([wine64, "wineboot", "-i"], env=env, **quiet).returncode != 0:
            lit_config.fatal("wine64 wineboot -i failed for the prefix %s" % prefix)
        # wineboot returns while its wineserver is still up (it writes the
        # registry, system.reg, when it exits); -p60 would find it running.
        if subprocess.run([wineserver, "-w"], env=env, **quiet).returncode != 0:
            lit_config.fatal("wineserver -w failed for the prefix %s" % prefix)
    if subprocess.run([wineserver, "-p60"], env=env, **quiet).returncode != 0:
        lit_config.fatal("wineserver -p60 failed for the prefix %s" % prefix)
    atexit.register(lambda: subprocess.run([wineserver, "-k"], env=env, **quiet))

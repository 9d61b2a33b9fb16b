#!/usr/bin/env python3
"""Hyper-parameter search for the selector's rankers (issue 6; docs/hpo.md).

One Optuna study per ablation arm (study name = arm) in one storage: an RDB (SQLite by default; a
database server URL works the same across machines) or Optuna's journal file
(`--storage journal:PATH`, a file on shared storage that workers on several nodes append to: the
Slurm array of docs/cluster.md, where SQLite would lock poorly over a network file system). Each trial runs

    cks eval --groups cv --no-baselines --format json --model <spec> <the trial's options>

(k-fold cross-validation over the *training* groups, folds grouped by shape; the evaluation
groups are never read by a trial) and returns the cross-validated mean top-1 regret, which TPE
minimises. Workers are separate processes on the shared storage, with heartbeats: a killed
worker loses at most its running trial (it is marked failed and retried with the same
parameters), and re-running the same command resumes the study until it holds --trials
COMPLETE trials.

    python3 scripts/hpo/tune.py --arm xgb-ndcg --trials 50 --workers 2
    python3 scripts/hpo/tune.py --report [--write-docs]      # table of every arm, exports
    optuna-dashboard sqlite:///data/hpo/studies.db

On a cluster the study is prepared once and each job-array task runs one worker
(scripts/cluster/tune_array.sbatch does this; SIGTERM makes a worker fail its running trial,
queue it again with the same parameters and exit):

    python3 scripts/hpo/tune.py --prepare --arm xgb-ndcg --storage journal:/shared/studies.log
    python3 scripts/hpo/tune.py --worker I --arm xgb-ndcg --trials 50 --storage journal:/shared/studies.log

`--list-arms` prints the arms and their search spaces.
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import glob
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_STORAGE = "sqlite:///data/hpo/studies.db"
DEFAULT_REGISTRY = "build/hpo/registry.db"  # merged from data/shards on first use (ignored folder)
DOCS_BEGIN = "<!-- hpo-results:begin -->"
DOCS_END = "<!-- hpo-results:end -->"

XGB_OBJECTIVES = ["rank:ndcg", "rank:pairwise", "reg:squarederror"]
MLP_OBJECTIVES = ["mse", "ranknet", "lambdarank-linear", "lambdarank-exp"]
# The feature-set ablation (cks --features; families in docs/hpo.md).
FEATURE_SETS = [
    ("feat-core", "core"),
    ("feat-core-arch", "core+arch"),
    ("feat-core-arch-waves", "core+arch+waves"),
    ("feat-core-arch-intensity", "core+arch+intensity"),
    ("feat-core-arch-smem", "core+arch+smem"),
    ("feat-core-arch-balance", "core+arch+balance"),
    ("feat-core-arch-fill", "core+arch+fill"),
    ("feat-full", "full"),
]


def make_arms():
    """arm name -> {"kind", "objectives" (searched when several), "features", "about"}."""
    arms = {
        "xgb-ndcg": {"kind": "xgboost", "objectives": ["rank:ndcg"], "about": "XGBoost, rank:ndcg pinned"},
        "xgb-pairwise": {"kind": "xgboost", "objectives": ["rank:pairwise"], "about": "XGBoost, rank:pairwise pinned"},
        "xgb-squared": {"kind": "xgboost", "objectives": ["reg:squarederror"],
                        "about": "XGBoost, reg:squarederror pinned (pointwise)"},
        "xgb-auto": {"kind": "xgboost", "objectives": XGB_OBJECTIVES,
                     "about": "XGBoost, the objective a categorical hyper-parameter"},
        "mlp-mse": {"kind": "mlp", "objectives": ["mse"], "about": "MLP, MSE pinned"},
        "mlp-ranknet": {"kind": "mlp", "objectives": ["ranknet"], "about": "MLP, RankNet pinned"},
        "mlp-lambdarank-linear": {"kind": "mlp", "objectives": ["lambdarank-linear"],
                                  "about": "MLP, LambdaRank with linear gains pinned"},
        "mlp-lambdarank-exp": {"kind": "mlp", "objectives": ["lambdarank-exp"],
                               "about": "MLP, LambdaRank with exponential gains pinned"},
        "mlp-auto": {"kind": "mlp", "objectives": MLP_OBJECTIVES, "about": "MLP, the loss a categorical hyper-parameter"},
        "ridge": {"kind": "ridge", "objectives": ["squared"], "about": "ridge regression on y"},
    }
    for name, features in FEATURE_SETS:
        arms[name] = {"kind": "xgboost", "objectives": XGB_OBJECTIVES, "features": features,
                      "about": f"XGBoost on feature set {features}, the objective searched"}
    for a in arms.values():
        a.setdefault("features", "full")
    return arms


ARMS = make_arms()

# ------------------------------------------------------------------------------ search spaces
# Ranges and their reasons: docs/hpo.md ("Search spaces"). Parameter names are the trial
# parameters stored in the study; to_cks_args() turns them into cks options.


def suggest(trial, arm):
    a = ARMS[arm]
    p = {}
    objs = a["objectives"]
    objective = trial.suggest_categorical("objective", objs) if len(objs) > 1 else objs[0]
    if a["kind"] == "xgboost":
        trial.suggest_float("eta", 0.01, 0.3, log=True)
        trial.suggest_int("max_depth", 3, 10)
        trial.suggest_int("rounds", 100, 600, log=True)
        trial.suggest_categorical("early_stopping", [0, 50])
        trial.suggest_float("min_child_weight", 1e-3, 100.0, log=True)
        trial.suggest_float("subsample", 0.5, 1.0)
        trial.suggest_float("colsample_bytree", 0.3, 1.0)
        if trial.suggest_categorical("l1", [False, True]):  # XGBoost's default alpha = 0 is outside a log range
            trial.suggest_float("reg_alpha", 1e-4, 10.0, log=True)
        trial.suggest_float("reg_lambda", 1e-3, 100.0, log=True)
        trial.suggest_categorical("max_bin", [64, 128, 256, 512])
        trial.suggest_categorical("max_cat_to_onehot", [1, 4, 8])
        if objective.startswith("rank:"):  # conditional: ranking objectives only
            trial.suggest_int("relevance_bands", 1, 5)
            trial.suggest_int("num_pairsample", 1, 4)
    elif a["kind"] == "mlp":
        trial.suggest_int("depth", 1, 3)
        trial.suggest_categorical("width", [32, 64, 128, 256])
        trial.suggest_float("dropout", 0.0, 0.5)
        trial.suggest_float("lr", 1e-4, 3e-2, log=True)
        if trial.suggest_categorical("decay", [False, True]):  # False: Adam (the default), True: AdamW
            trial.suggest_float("weight_decay", 1e-6, 1e-1, log=True)
        trial.suggest_categorical("batch", [512, 1024, 2048, 4096, 8192])
        if objective != "mse":  # conditional: pairwise losses only
            trial.suggest_int("pair_cap", 128, 8192, log=True)
    else:
        trial.suggest_float("lambda", 1e-4, 1e4, log=True)
    p.update(trial.params)
    p["objective"] = objective
    return p


# The first trial of every study: the shipped options (for XGBoost exactly `cks train`'s defaults;
# for the MLP a constant width of 128 instead of (128, 64)).
DEFAULT_TRIAL = {
    "xgboost": {"eta": 0.1, "max_depth": 8, "rounds": 300, "early_stopping": 0, "min_child_weight": 1.0,
                "subsample": 0.8, "colsample_bytree": 0.8, "l1": False, "reg_lambda": 1.0, "max_bin": 256,
                "max_cat_to_onehot": 4, "relevance_bands": 2, "num_pairsample": 1},
    "mlp": {"depth": 2, "width": 128, "dropout": 0.0, "lr": 1e-3, "decay": False, "batch": 2048,
            "pair_cap": 2048},
    "ridge": {"lambda": 1.0},
}


def default_trial(arm):
    a = ARMS[arm]
    p = dict(DEFAULT_TRIAL[a["kind"]])
    objective = a["objectives"][0]
    if len(a["objectives"]) > 1:
        p["objective"] = objective
    if a["kind"] == "xgboost" and not objective.startswith("rank:"):
        p.pop("relevance_bands"), p.pop("num_pairsample")
    if a["kind"] == "mlp" and objective == "mse":
        p.pop("pair_cap")
    return p


def to_cks_args(arm, params):
    """(model spec, [options]) for a trial's parameters."""
    a = ARMS[arm]
    objective = params.get("objective", a["objectives"][0])
    args = []
    if a["features"] != "full":
        args += ["--features", a["features"]]
    if a["kind"] == "xgboost":
        spec = "xgboost:" + objective
        names = {"eta": "--eta", "max_depth": "--max-depth", "rounds": "--rounds", "early_stopping": "--early-stopping",
                 "min_child_weight": "--min-child-weight", "subsample": "--subsample",
                 "colsample_bytree": "--colsample-bytree", "reg_alpha": "--reg-alpha", "reg_lambda": "--reg-lambda",
                 "max_bin": "--max-bin", "max_cat_to_onehot": "--max-cat-to-onehot",
                 "relevance_bands": "--relevance-bands", "num_pairsample": "--num-pairsample"}
    elif a["kind"] == "mlp":
        spec = "mlp:" + objective
        names = {"dropout": "--dropout", "lr": "--lr", "weight_decay": "--weight-decay", "batch": "--batch",
                 "pair_cap": "--pair-cap"}
        if "depth" in params:
            args += ["--hidden", ",".join([str(params["width"])] * int(params["depth"]))]
    else:
        spec = "ridge"
        names = {"lambda": "--lambda"}
    for key, flag in names.items():
        if key in params:
            v = params[key]
            args += [flag, repr(v) if isinstance(v, float) else str(v)]
    return spec, args


# ------------------------------------------------------------------------------ running cks


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die_with_parent():
    """preexec_fn: the child cks gets SIGKILL when its worker dies (Linux prctl)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


# A worker's stop request (SIGTERM: Slurm's preemption, scancel, requeue) and the cks it runs.
STOP = {"requested": False, "child": None}


def run_cks(cks, argv, timeout=None):
    """Runs cks, returns the rows of its JSON table. Raises RuntimeError with its stderr tail."""
    if STOP["requested"]:
        raise RuntimeError("stop requested")
    with subprocess.Popen([cks] + argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=die_with_parent) as child:
        STOP["child"] = child
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise
        finally:
            STOP["child"] = None
    if child.returncode != 0:
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"cks exited with {child.returncode}: {tail}")
    return json.loads(stdout)


def on_stop_signal(signum, frame):
    """SIGTERM / SIGINT in a worker: end the running cks (its trial fails and is queued again by
    the worker loop), start no further trial."""
    STOP["requested"] = True
    child = STOP["child"]
    if child is not None and child.poll() is None:
        child.terminate()


def model_row(rows):
    for r in rows:
        if r["slice"] == "all":
            return r  # the model is the first method
    raise RuntimeError("cks eval printed no 'all' row")


def metrics_of(row):
    return {"mean": row["regret_mean"], "median": row["regret_median"], "p95": row["regret_p95"],
            "max": row["regret_max"], "top4": row["top4_regret"], "hit": row["top1_hit"], "groups": row["groups"],
            "note": row.get("note", "")}


def cv_argv(proto, arm, params):
    spec, args = to_cks_args(arm, params)
    return ["eval", "--registry", proto["registry"], "--groups", "cv", "--folds", str(proto["folds"]),
            "--cv-max-groups", str(proto["cv_max_groups"]), "--cv-max-candidates", str(proto["cv_max_candidates"]),
            "--cv-keep-top", str(proto["cv_keep_top"]), "--threads", str(proto["threads"]), "--seed", str(proto["seed"]),
            "--no-baselines", "--format", "json", "--model", spec] + args


def shard_paths():
    """Every shard of data/shards, in each form (docs/registry.md: .db.xz, .db.gz, .cols.xz)."""
    pats = ("data/shards/*.db.xz", "data/shards/*.db.gz", "data/shards/*.cols.xz")
    return sorted(p for pat in pats for p in glob.glob(os.path.join(ROOT, pat)))


def shards_fingerprint():
    h = hashlib.sha256()
    for p in shard_paths():
        st = os.stat(p)
        h.update(f"{os.path.basename(p)}:{st.st_size}\n".encode())
    return h.hexdigest()[:16]


def ensure_registry(args):
    """The registry trials read: --registry, or data/shards merged once into build/hpo/."""
    if args.registry:
        if not os.path.exists(os.path.join(ROOT, args.registry)) and not os.path.exists(args.registry):
            sys.exit(f"tune.py: registry {args.registry} not found")
        return args.registry
    path = os.path.join(ROOT, DEFAULT_REGISTRY)
    stamp = path + ".shards"
    fp = shards_fingerprint()
    if os.path.exists(path) and os.path.exists(stamp) and open(stamp).read().strip() == fp:
        return DEFAULT_REGISTRY
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for p in (path, path + "-wal", path + "-shm", stamp):
        if os.path.exists(p):
            os.remove(p)
    log(f"tune.py: merging data/shards into {DEFAULT_REGISTRY} (once; every trial reads it)")
    shards = shard_paths()
    subprocess.run([args.cks, "data", "merge", "--no-plan-items", "--out", path] + shards, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    with open(stamp, "w") as f:
        f.write(fp + "\n")
    return DEFAULT_REGISTRY


# ------------------------------------------------------------------------------ Optuna


def import_optuna():
    try:
        import optuna
    except ImportError:
        sys.exit("tune.py: Optuna is not installed (python3 -m pip install -r scripts/requirements.txt)")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def journal_storage(optuna, path, heartbeat, retry):
    """Optuna's journal storage on a file (JournalFileBackend from Optuna 4.0, JournalFileStorage
    before), locked with open(O_EXCL) (works on NFS), with heartbeats: Optuna's journal has
    none, so a running trial records the time in a system attribute every `heartbeat` seconds
    and a trial silent for 4x that is stale (failed, then queued again by `retry`)."""
    try:
        from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock
        backend = JournalFileBackend(path, lock_obj=JournalFileOpenLock(path))
    except ImportError:  # Optuna < 4.0
        backend = optuna.storages.JournalFileStorage(path, lock_obj=optuna.storages.JournalFileOpenLock(path))
    try:
        from optuna.storages._heartbeat import BaseHeartbeat
    except ImportError:
        log("tune.py: warning: this Optuna has no heartbeat interface: a killed worker's trial stays RUNNING")
        return optuna.storages.JournalStorage(backend)

    class HeartbeatJournalStorage(optuna.storages.JournalStorage, BaseHeartbeat):
        KEY = "cks_heartbeat"

        def record_heartbeat(self, trial_id):
            try:
                self.set_trial_system_attr(trial_id, self.KEY, time.time())
            except Exception:  # the trial finished meanwhile (or was failed as stale elsewhere)
                pass

        def _get_stale_trial_ids(self, study_id):
            now = time.time()
            stale = []
            for t in self.get_all_trials(study_id, deepcopy=False,
                                         states=(optuna.trial.TrialState.RUNNING,)):
                last = t.system_attrs.get(self.KEY)
                if last is None and t.datetime_start is not None:
                    last = t.datetime_start.timestamp()
                if last is not None and now - last > 4 * heartbeat:
                    stale.append(t._trial_id)
            return stale

        def get_heartbeat_interval(self):
            return heartbeat

        def get_heartbeat_stale_trial_callback(self):
            return retry

        def get_failed_trial_callback(self):  # Optuna < 4.9
            return retry

    return HeartbeatJournalStorage(backend)


def retry_callback(optuna):
    """Queues a failed trial again with its parameters (at most 3 times)."""
    retry_cls = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None) or \
        optuna.storages.RetryFailedTrialCallback  # Optuna < 4.9
    return retry_cls(max_retry=3)


def make_storage(optuna, url, heartbeat=30):
    retry = retry_callback(optuna)
    if url.startswith("journal:"):
        path = url[len("journal:"):]
        if not os.path.isabs(path):
            path = os.path.join(ROOT, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return journal_storage(optuna, path, heartbeat, retry)
    kwargs = {}
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if not os.path.isabs(path):
            path = os.path.join(ROOT, path)
            url = "sqlite:///" + path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kwargs["engine_kwargs"] = {"connect_args": {"timeout": 120}}
    hb = {"heartbeat_interval": heartbeat, "grace_period": 4 * heartbeat}
    try:
        return optuna.storages.RDBStorage(url, heartbeat_stale_trial_callback=retry, **hb, **kwargs)
    except TypeError:  # Optuna < 4.4
        return optuna.storages.RDBStorage(url, failed_trial_callback=retry, **hb, **kwargs)


def protocol(args, registry):
    return {"registry": registry, "folds": args.folds, "cv_max_groups": args.cv_max_groups,
            "cv_max_candidates": args.cv_max_candidates, "cv_keep_top": args.cv_keep_top, "threads": args.threads,
            "seed": args.seed}


def comparable(proto):
    """The protocol without the registry's path (the same data may live elsewhere)."""
    return {k: v for k, v in proto.items() if k != "registry"}


def open_study(optuna, storage, arm, proto, sampler_seed, create):
    sampler = optuna.samplers.TPESampler(seed=sampler_seed, multivariate=True, group=True, constant_liar=True)
    if create:
        study = optuna.create_study(study_name=arm, storage=storage, direction="minimize", sampler=sampler,
                                    load_if_exists=True)
    else:
        study = optuna.load_study(study_name=arm, storage=storage, sampler=sampler)
    return study


def counts(optuna, study):
    c = {s: 0 for s in ("COMPLETE", "RUNNING", "WAITING", "FAIL", "PRUNED")}
    for t in study.get_trials(deepcopy=False):
        c[t.state.name] = c.get(t.state.name, 0) + 1
    return c


def best_text(study):
    try:
        b = study.best_trial
        return f"best {b.value:.4f} (trial {b.number})"
    except ValueError:
        return "no complete trial yet"


def worker_main(args):
    optuna = import_optuna()
    storage = make_storage(optuna, args.storage, args.heartbeat)
    arm, target = args.arm[0], args.trials
    try:
        plain = optuna.load_study(study_name=arm, storage=storage)
    except KeyError:
        sys.exit(f"tune.py: no study {arm} in {args.storage} (tune.py --prepare --arm {arm} creates it)")
    # A worker started by tune.py gets the protocol on its command line; one started alone
    # (--worker, a job-array task) reads what --prepare stored in the study.
    proto = json.loads(args.protocol_json) if args.protocol_json else plain.user_attrs.get("protocol")
    if proto is None:
        sys.exit(f"tune.py: study {arm} has no protocol (tune.py --prepare --arm {arm} stores it)")
    signal.signal(signal.SIGTERM, on_stop_signal)
    signal.signal(signal.SIGINT, on_stop_signal)
    # The TPE seed of this worker: --sampler-seed, the worker index and the trials already in the
    # study (a resumed worker must not replay the random start-up draws of an earlier run).
    started = len(plain.get_trials(deepcopy=False))
    study = open_study(optuna, storage, arm, proto, args.sampler_seed + 1000 * args._worker + 1000003 * started,
                       create=False)
    tag = f"[{arm} w{args._worker}]"
    deadline = time.time() + args.timeout if args.timeout else None
    fails_in_row = 0

    def objective(trial):
        params = suggest(trial, arm)
        argv = cv_argv(proto, arm, params)
        trial.set_user_attr("cks_argv", " ".join(argv))
        t0 = time.time()
        row = model_row(run_cks(args.cks, argv, timeout=args.trial_timeout))
        m = metrics_of(row)
        for k in ("median", "p95", "max", "top4", "hit", "groups", "note"):
            trial.set_user_attr(k if k in ("note", "groups") else "cv_" + k, m[k])
        trial.set_user_attr("seconds", round(time.time() - t0, 2))
        return m["mean"]

    while True:
        if STOP["requested"]:
            log(f"{tag} stop requested: no further trial")
            break
        optuna.storages.fail_stale_trials(study)  # a killed worker's trial: FAIL, then retried (WAITING)
        c = counts(optuna, study)
        if c["COMPLETE"] >= target:
            break
        if deadline and time.time() >= deadline:
            log(f"{tag} --timeout reached")
            break
        if c["COMPLETE"] + c["RUNNING"] >= target and c["WAITING"] == 0:
            time.sleep(5)  # the last trials are running elsewhere; wait in case one fails
            continue
        t0 = time.time()
        trial_holder = {}

        def remember(study_, frozen):
            trial_holder["t"] = frozen

        try:
            study.optimize(objective, n_trials=1, catch=(RuntimeError, subprocess.TimeoutExpired, ValueError),
                           callbacks=[remember])
        except (optuna.exceptions.UpdateFinishedTrialError, ValueError) as e:
            if isinstance(e, ValueError) and "Cannot tell" not in str(e):
                raise
            # Under heavy load this worker's heartbeat lagged and another worker declared the trial
            # stale (FAIL, re-queued) while it was still running: its result is dropped, the
            # re-queued copy runs again. Not an error of the study.
            log(f"{tag} a trial was taken over as stale while running ({e}); continuing")
            continue
        except Exception as e:  # e.g. sqlite 'database is locked' beyond the connect timeout
            if "locked" not in str(e):
                raise
            log(f"{tag} storage busy ({e}); retrying")
            time.sleep(1)
            continue
        t = trial_holder.get("t")
        c = counts(optuna, study)
        if t is None:
            continue
        if STOP["requested"] and t.state.name != "COMPLETE":
            # Stopped from outside (preemption): not the configuration's fault. It runs again, with
            # the same parameters, in whichever worker asks next.
            retry_callback(optuna)(study, t)
            log(f"{tag} trial {t.number} stopped by a signal; queued again with the same parameters")
            break
        if t.state.name == "COMPLETE":
            fails_in_row = 0
            log(f"{tag} trial {t.number} {t.value:.4f} in {time.time() - t0:.0f} s | complete {c['COMPLETE']}/{target}, "
                f"running {c['RUNNING']}, failed {c['FAIL']} | {best_text(study)}")
        else:
            fails_in_row += 1
            log(f"{tag} trial {t.number} {t.state.name} after {time.time() - t0:.0f} s | complete "
                f"{c['COMPLETE']}/{target} | {best_text(study)}")
            if fails_in_row >= 3:
                log(f"{tag} three trials in a row failed; stopping this worker")
                return 1
    return 0


def warn_reference_blas(arms):
    """MLP training runs libtorch's matrix products through libblas.so.3: the reference BLAS makes
    an MLP trial ~7x slower than OpenBLAS (docs/hpo.md, "Cost")."""
    if not any(ARMS[a]["kind"] == "mlp" for a in arms) or "openblas" in os.environ.get("LD_LIBRARY_PATH", ""):
        return
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    if os.path.exists(blas) and "openblas" not in blas:
        log(f"tune.py: warning: libblas.so.3 is {blas} (reference BLAS): MLP trials run ~7x slower than with "
            "OpenBLAS (apt-get install libopenblas0-pthread)")


def prepare_study(optuna, storage, arm, proto, args):
    """The arm's study, created with its protocol and the default configuration as first trial."""
    study = open_study(optuna, storage, arm, proto, args.sampler_seed, create=True)
    old = study.user_attrs.get("protocol")
    if old is None:
        study.set_user_attr("protocol", proto)
        study.set_user_attr("arm", ARMS[arm])
        study.enqueue_trial(default_trial(arm), user_attrs={"enqueued": "default configuration"})
    elif comparable(old) != comparable(proto) and not args.force:
        sys.exit(f"tune.py: study {arm} was run with protocol {old}; this command asks for {proto} (trials would "
                 "not be comparable). Use the same options, another --storage, or --force.")
    elif old != proto:
        study.set_user_attr("protocol", proto)  # the same protocol, the registry found elsewhere
    return study


def tune(args):
    optuna = import_optuna()
    warn_reference_blas(args.arm)
    registry = ensure_registry(args)
    proto = protocol(args, registry)
    storage = make_storage(optuna, args.storage, args.heartbeat)
    status = 0
    for arm in args.arm:
        study = prepare_study(optuna, storage, arm, proto, args)
        c = counts(optuna, study)
        log(f"tune.py: {arm}: {ARMS[arm]['about']}; {c['COMPLETE']} complete of {args.trials}, "
            f"{args.workers} worker(s); {best_text(study)}")
        if args.prepare or c["COMPLETE"] >= args.trials:
            continue
        base = [sys.executable, os.path.abspath(__file__), "--arm", arm, "--storage", args.storage, "--trials",
                str(args.trials), "--cks", args.cks, "--sampler-seed", str(args.sampler_seed),
                "--trial-timeout", str(args.trial_timeout), "--heartbeat", str(args.heartbeat),
                "--protocol-json", json.dumps(proto)]
        if args.timeout:
            base += ["--timeout", str(args.timeout)]
        procs = [subprocess.Popen(base + ["--_worker", str(i)], cwd=ROOT) for i in range(args.workers)]
        try:
            for p in procs:
                status |= p.wait()
        except KeyboardInterrupt:
            for p in procs:
                p.send_signal(signal.SIGINT)
            for p in procs:
                p.wait()
            raise
        c = counts(optuna, study)
        log(f"tune.py: {arm}: {c['COMPLETE']} complete, {c['FAIL']} failed; {best_text(study)}")
    return status


# ------------------------------------------------------------------------------ report


def fmt_pct(v):
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}"


def export_study(optuna, study, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    trials = study.get_trials(deepcopy=False)
    pkeys = sorted({k for t in trials for k in t.params})
    ukeys = sorted({k for t in trials for k in t.user_attrs})
    path = os.path.join(out_dir, f"{study.study_name}.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["number", "state", "value", "datetime_start", "datetime_complete", "duration_s"] +
                   ["params_" + k for k in pkeys] + ["user_attrs_" + k for k in ukeys])
        for t in trials:
            dur = (t.datetime_complete - t.datetime_start).total_seconds() if t.datetime_complete and t.datetime_start else ""
            w.writerow([t.number, t.state.name, "" if t.value is None else repr(t.value),
                        t.datetime_start.isoformat() if t.datetime_start else "",
                        t.datetime_complete.isoformat() if t.datetime_complete else "", dur] +
                       [t.params.get(k, "") for k in pkeys] + [t.user_attrs.get(k, "") for k in ukeys])
    return path


def budget_of(study):
    done = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    if not done:
        return 0, 0.0, 0.0
    trial_s = sum((t.datetime_complete - t.datetime_start).total_seconds() for t in done)
    wall_s = (max(t.datetime_complete for t in done) - min(t.datetime_start for t in done)).total_seconds()
    return len(done), trial_s, wall_s


def eval_argv(registry, arm, params, threads, max_candidates=0, layouts="", min_candidates=0):
    spec, args = to_cks_args(arm, params)
    extra = ["--cv-max-candidates", str(max_candidates)] if max_candidates else []
    extra += ["--layouts", layouts] if layouts else []
    extra += ["--min-eval-candidates", str(min_candidates)] if min_candidates else []
    return ["eval", "--registry", registry, "--groups", "evaluation", "--no-baselines", "--format", "json",
            "--threads", str(threads), "--model", spec] + args + extra


def report(args):
    optuna = import_optuna()
    registry = ensure_registry(args)
    storage = make_storage(optuna, args.storage)
    names = {s.study_name for s in optuna.get_all_study_summaries(storage)}
    arms = [a for a in (args.arm or list(ARMS)) if a in names]
    if not arms:
        sys.exit(f"tune.py: no study of any arm in {args.storage}")
    out_dir = os.path.join(ROOT, args.export_dir)
    cache_path = os.path.join(out_dir, "report.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    rows, proto = [], None
    for arm in arms:
        study = optuna.load_study(study_name=arm, storage=storage)
        export_study(optuna, study, os.path.join(out_dir, "trials"))
        proto = study.user_attrs.get("protocol", proto)
        n, trial_s, wall_s = budget_of(study)
        if n == 0:
            continue
        best = study.best_trial
        params = dict(best.params)
        spec, opts = to_cks_args(arm, params)
        eval_opts = [args.eval_max_candidates, args.eval_layouts, args.min_eval_candidates]
        key = hashlib.sha256(json.dumps([arm, params, registry, shards_fingerprint()] + eval_opts,
                                        sort_keys=True).encode()).hexdigest()
        if args.evaluate and key not in cache:
            log(f"tune.py: {arm}: training trial {best.number}'s configuration on every training group, scoring the "
                "evaluation groups")
            t0 = time.time()
            m = metrics_of(model_row(run_cks(args.cks, eval_argv(registry, arm, params, args.eval_threads,
                                                                 *eval_opts))))
            m["seconds"] = round(time.time() - t0, 1)
            cache[key] = m
            os.makedirs(out_dir, exist_ok=True)
            with open(cache_path, "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
        rows.append({"arm": arm, "about": ARMS[arm]["about"], "features": ARMS[arm]["features"], "trials": n,
                     "trial_h": trial_s / 3600, "wall_h": wall_s / 3600, "best": best.number, "params": params,
                     "spec": spec, "opts": opts,
                     "cv": {"mean": best.value, "median": best.user_attrs.get("cv_median"),
                            "p95": best.user_attrs.get("cv_p95"), "max": best.user_attrs.get("cv_max"),
                            "top4": best.user_attrs.get("cv_top4")},
                     "eval": cache.get(key)})
    lines = []
    lines.append("| arm | trials | budget (trial-h / wall-h) | CV mean | CV median | CV p95 | CV max | CV top-4 | "
                 "eval mean | eval median | eval p95 | eval max | eval top-4 |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        e = r["eval"] or {}
        lines.append(f"| {r['arm']} | {r['trials']} | {r['trial_h']:.2f} / {r['wall_h']:.2f} | "
                     + " | ".join(fmt_pct(r["cv"][k]) for k in ("mean", "median", "p95", "max", "top4")) + " | "
                     + " | ".join(fmt_pct(e.get(k)) for k in ("mean", "median", "p95", "max", "top4")) + " |")
    lines.append("")
    lines.append("Regrets in percent. CV: the best trial's "
                 + (f"{proto['folds']}-fold cross-validation over {proto['cv_max_groups']} training groups, "
                    f"trained on <= {proto['cv_max_candidates']} candidates per group (top {proto['cv_keep_top']} + "
                    f"random), held-out groups whole" if proto else "cross-validation")
                 + "; eval: that configuration trained on every training group ("
                 + (f"<= {args.eval_max_candidates} candidates per group, top {proto['cv_keep_top'] if proto else 16} + random"
                    if args.eval_max_candidates else "all candidates")
                 + ") and scored on the evaluation groups"
                 + (f" of layouts {args.eval_layouts}" if args.eval_layouts else "")
                 + (f" with >= {args.min_eval_candidates} measured candidates" if args.min_eval_candidates else "")
                 + ", which no trial read.")
    by_arm = {r["arm"]: r for r in rows}
    if "feat-core-arch" in by_arm and "feat-full" in by_arm:
        base = by_arm["feat-core-arch"]["cv"]["mean"]
        full = by_arm["feat-full"]["cv"]["mean"]
        removed = lambda v: f"{100 * (base - v) / base:.0f} %" if base > 0 else "–"
        text = "Feature-set ablation (CV mean regret of each arm's best trial): "
        if "feat-core" in by_arm:
            text += f"structural core only {100 * by_arm['feat-core']['cv']['mean']:.2f} %, "
        text += f"structural core + architecture {100 * base:.2f} %; one derived group added to it: "
        text += "; ".join(f"{by_arm[n]['features'].split('+')[-1]} {100 * by_arm[n]['cv']['mean']:.2f} % "
                          f"(removes {removed(by_arm[n]['cv']['mean'])})" for n, _ in FEATURE_SETS[2:-1] if n in by_arm)
        text += f"; full φ {100 * full:.2f} %: the derived features remove {removed(full)} of the structural-only regret"
        ev0, ev1 = by_arm["feat-core-arch"]["eval"], by_arm["feat-full"]["eval"]
        if ev0 and ev1 and ev0["mean"] > 0:
            text += (f" (evaluation groups: {100 * ev0['mean']:.2f} % → {100 * ev1['mean']:.2f} %, "
                     f"{100 * (ev0['mean'] - ev1['mean']) / ev0['mean']:.0f} % removed)")
        lines.append("")
        lines.append(text + ".")
    lines.append("")
    lines.append("Best configuration per arm (the eval columns: `cks eval --groups evaluation --no-baselines "
                 f"--threads {args.eval_threads} --model SPEC OPTIONS"
                 + (f" --cv-max-candidates {args.eval_max_candidates}" if args.eval_max_candidates else "")
                 + (f" --layouts {args.eval_layouts}" if args.eval_layouts else "")
                 + (f" --min-eval-candidates {args.min_eval_candidates}" if args.min_eval_candidates else "") + "`):")
    lines.append("")
    for r in rows:
        lines.append(f"- {r['arm']} (trial {r['best']}): `--model {r['spec']} {' '.join(r['opts'])}`")
    if rows:
        winner = min(rows, key=lambda r: r["cv"]["mean"])
        kind, _, objective = winner["spec"].partition(":")
        train_cmd = (f"build/bin/cks train --model {kind}" + (f" --objective {objective}" if objective else "")
                     + f" {' '.join(winner['opts'])} --threads 2 --out models/default.json")
        shipped = None
        if "xgb-ndcg" in names:
            for t in optuna.load_study(study_name="xgb-ndcg", storage=storage).get_trials(deepcopy=False):
                if t.state.name == "COMPLETE" and t.user_attrs.get("enqueued") == "default configuration":
                    shipped = t.value
        lines.append("")
        verdict = ""
        if shipped is not None:
            verdict = (f" The shipped configuration (`cks train` defaults, the first trial of xgb-ndcg) has CV regret "
                       f"{fmt_pct(shipped)} %: " + ("the best arm beats it, so it becomes the default: "
                                                    f"`{train_cmd}`." if winner["cv"]["mean"] < shipped
                                                    else "no arm beats it; the default stays."))
        lines.append(f"Lowest CV regret: **{winner['arm']}** ({fmt_pct(winner['cv']['mean'])} %).{verdict}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    if args.write_docs:
        path = os.path.join(ROOT, "docs/hpo.md")
        doc = open(path).read()
        if DOCS_BEGIN not in doc or DOCS_END not in doc:
            sys.exit("tune.py: docs/hpo.md lacks the hpo-results markers")
        head, rest = doc.split(DOCS_BEGIN, 1)
        _, tail = rest.split(DOCS_END, 1)
        with open(path, "w") as f:
            f.write(head + DOCS_BEGIN + "\n" + text + DOCS_END + tail)
        log("tune.py: docs/hpo.md updated")
    return 0


def list_arms():
    class Recorder:
        def __init__(self):
            self.params, self.lines = {}, []

        def _rec(self, name, text, value):
            self.lines.append(f"    {name}: {text}")
            self.params[name] = value
            return value

        def suggest_categorical(self, name, choices):
            # Show the conditional knobs too: gates open, a ranking objective.
            pick = choices[-1] if choices == [False, True] else next(
                (c for c in choices if c not in ("mse", "reg:squarederror", "squared")), choices[0])
            return self._rec(name, f"one of {choices}", pick)

        def suggest_int(self, name, lo, hi, log=False):
            return self._rec(name, f"int [{lo}, {hi}]" + (" log" if log else ""), lo)

        def suggest_float(self, name, lo, hi, log=False):
            return self._rec(name, f"float [{lo}, {hi}]" + (" log" if log else ""), lo)

    for arm, a in ARMS.items():
        r = Recorder()
        suggest(r, arm)
        print(f"{arm}: {a['about']} (features {a['features']}; relevance_bands, num_pairsample: ranking objectives "
              "only; pair_cap: pairwise losses only; reg_alpha / weight_decay: when l1 / decay)")
        print("\n".join(r.lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arm", action="append", help="arm to tune (repeatable; --all for every arm)")
    ap.add_argument("--all", action="store_true", help="every arm, one after the other")
    ap.add_argument("--storage", default=DEFAULT_STORAGE, help="Optuna RDB storage URL (default %(default)s)")
    ap.add_argument("--trials", type=int, default=50, help="COMPLETE trials per arm (default %(default)s)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes per arm (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=0, help="stop starting trials after S seconds (0: none)")
    ap.add_argument("--trial-timeout", type=float, default=1800, help="a trial running longer fails (s)")
    ap.add_argument("--heartbeat", type=int, default=30,
                    help="seconds between a running trial's heartbeats; a trial silent for 4x this is stale")
    ap.add_argument("--cks", default=os.path.join(ROOT, "build/bin/cks"), help="the cks binary")
    ap.add_argument("--registry", help="registry the trials read (default: data/shards merged into "
                                       f"{DEFAULT_REGISTRY})")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--cv-max-groups", type=int, default=200)
    ap.add_argument("--cv-max-candidates", type=int, default=300)
    ap.add_argument("--cv-keep-top", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1, help="cks threads per trial")
    ap.add_argument("--seed", type=int, default=0, help="cks --seed (folds, subsamples, models)")
    ap.add_argument("--sampler-seed", type=int, default=0,
                    help="TPE seed (worker i of a run that finds n trials uses seed + 1000 i + 1000003 n)")
    ap.add_argument("--force", action="store_true", help="resume a study run with another protocol")
    ap.add_argument("--report", action="store_true", help="table of every arm's best trial; exports the studies")
    ap.add_argument("--no-evaluate", dest="evaluate", action="store_false",
                    help="--report without training the best configurations for the evaluation groups")
    ap.add_argument("--eval-threads", type=int, default=2, help="--report: cks threads of the final trainings")
    ap.add_argument("--eval-max-candidates", type=int, default=0,
                    help="--report: train each arm's final model on at most C candidates per group (0: all)")
    ap.add_argument("--eval-layouts", default="", help="--report: only the evaluation groups of these layouts")
    ap.add_argument("--min-eval-candidates", type=int, default=0,
                    help="--report: leave out evaluation groups with fewer measured candidates (unfinished)")
    ap.add_argument("--export-dir", default="data/hpo", help="--report: CSV exports, report.md, report.json")
    ap.add_argument("--write-docs", action="store_true", help="--report: replace the table in docs/hpo.md")
    ap.add_argument("--list-arms", action="store_true", help="print the arms and their search spaces")
    ap.add_argument("--prepare", action="store_true",
                    help="create the arms' studies (protocol, default first trial) and start no worker: then "
                         "run --worker I once per worker, e.g. as the tasks of a Slurm job array")
    ap.add_argument("--worker", type=int, metavar="I",
                    help="run worker I of one --arm on its prepared study until it holds --trials COMPLETE "
                         "trials (SIGTERM: its running trial is queued again, the worker exits 0)")
    ap.add_argument("--_worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--protocol-json", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list_arms:
        list_arms()
        return 0
    if args.all:
        args.arm = list(ARMS)
    for a in args.arm or []:
        if a not in ARMS:
            ap.error(f"unknown arm {a!r} (expected one of {', '.join(ARMS)})")
    if args.worker is not None:
        if args._worker is not None or not args.arm or len(args.arm) != 1:
            ap.error("--worker runs one --arm")
        if args.worker < 0:
            ap.error("--worker must be >= 0")
        if not os.path.exists(args.cks):
            sys.exit(f"tune.py: {args.cks} not found (build first: bash scripts/setup.sh)")
        args._worker = args.worker
    if args._worker is not None:
        return worker_main(args)
    if args.report:
        return report(args)
    if not args.arm:
        ap.error("give --arm NAME (or --all, --report, --list-arms)")
    if not os.path.exists(args.cks):
        sys.exit(f"tune.py: {args.cks} not found (build first: bash scripts/setup.sh)")
    if args.workers < 1 or args.trials < 1:
        ap.error("--workers and --trials must be >= 1")
    return tune(args)


if __name__ == "__main__":
    sys.exit(main())

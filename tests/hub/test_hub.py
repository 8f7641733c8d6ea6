"""A model named by a Hub id, read from a real HTTP server on the loopback that plays the
Hugging Face Hub (hub_server.py) and from a Hugging Face cache laid out as huggingface_hub
lays it out (hub_repositories.write_cache): the same output as the checkpoint's folder, the
commit recorded, and every failure one line with its exit code and nothing on stdout."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hub_repositories as hub  # noqa: E402

SHARDED = "iteragpu-test/tiny-llama-sharded"
SINGLE = "iteragpu-test/tiny-llama"
PREDICT = ["--compute-capability", "9.0", "--batch", "2", "--context", "64", "--new-tokens", "4"]


def start_server(root, work, *extra):
    port_file = os.path.join(work, "port-%d" % len(os.listdir(work)))
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "hub_server.py"), "--root", root,
                                "--port-file", port_file, *extra], stderr=subprocess.PIPE)
    for _ in range(200):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return process, int(f.read())
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the loopback Hub did not start: %s" % process.stderr.read().decode())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The repositories, their cache, a folder copy of each checkpoint under its id (so that
    a folder and an id print the same names), and the server."""
    work = str(tmp_path_factory.mktemp("hub"))
    root, cache, folders = (os.path.join(work, name) for name in ("root", "cache", "folders"))
    repositories = hub.write_hub(root)
    for repo_id in (SHARDED, SINGLE):
        hub.write_cache(cache, repo_id, repositories[repo_id]["commit"], repositories[repo_id]["folder"])
        shutil.copytree(repositories[repo_id]["folder"], os.path.join(folders, repo_id))
    process, port = start_server(root, work)
    yield {"root": root, "cache": cache, "folders": folders, "port": port, "repositories": repositories,
           "endpoint": "http://127.0.0.1:%d" % port, "empty_cache": os.path.join(work, "no-cache")}
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def run(site, *args, cwd=None, **environment):
    """The CLI with the Hub at the loopback server and an empty cache, unless told otherwise."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update({"HF_ENDPOINT": site["endpoint"], "HF_HUB_CACHE": site["empty_cache"],
                "HF_HOME": os.path.join(site["empty_cache"], "home")})
    env.update({k: v for k, v in environment.items() if v is not None})
    for k, v in environment.items():
        if v is None:
            env.pop(k, None)
    return subprocess.run([os.environ["ITERAGPU_CLI"], *args], capture_output=True, text=True,
                          cwd=cwd or site["folders"], env=env, timeout=120)


def assert_valid(document):
    """The document is valid against the schema it names (data/schema/NAME.schema.json)."""
    if os.environ.get("ITERAGPU_REQUIRE_JUPYTER") == "1":  # set where the tests' packages must be there
        import jsonschema
    else:
        jsonschema = pytest.importorskip("jsonschema")
    source = os.path.dirname(os.path.dirname(HERE))
    name = document["schema"].split(".", 1)[1]
    with open(os.path.join(source, "data", "schema", name + ".schema.json")) as f:
        jsonschema.validate(document, json.load(f))


def without_origin(text, site):
    """The output less what says where the model was read from: the Model line of a text
    report, model_source of a JSON one, and the cache's snapshot folder written as the id."""
    for repo_id in (SHARDED, SINGLE):
        snapshot = os.path.join(site["cache"], "models--" + repo_id.replace("/", "--"), "snapshots",
                                site["repositories"][repo_id]["commit"])
        text = text.replace(snapshot, repo_id)
    if text.startswith("{"):
        document = json.loads(text)

        def strip(value):
            if isinstance(value, dict):
                return {k: strip(v) for k, v in value.items() if k != "model_source"}
            if isinstance(value, list):
                return [strip(v) for v in value]
            return value
        return json.dumps(strip(document), indent=1)
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("Model: "))


COMMANDS = [
    ["estimate", "--checkpoint", SHARDED],
    ["estimate", "--checkpoint", SHARDED, "--by-tensor", "--format", "json"],
    ["predict", "--model", SHARDED, *PREDICT],
    ["predict", "--model", SHARDED, *PREDICT, "--format", "json"],
    ["packages", "--model", SHARDED, "--batch", "2", "--context", "64"],
    ["packages", "--model", SHARDED, "--batch", "2", "--context", "64", "--format", "json"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:1] + c[3:]) for c in COMMANDS])
def test_a_folder_its_cache_snapshot_and_its_hub_id_give_the_same_output(site, command):
    folder = run(site, *command)  # the id's name is a folder here: read as a path
    assert folder.returncode == 0, folder.stderr
    elsewhere = os.path.dirname(site["folders"])  # where no folder has the id's name
    from_hub = run(site, *command, cwd=elsewhere)
    assert from_hub.returncode == 0, from_hub.stderr
    from_cache = run(site, *command, cwd=elsewhere, HF_HUB_CACHE=site["cache"], HF_HUB_OFFLINE="1")
    assert from_cache.returncode == 0, from_cache.stderr
    assert "Model: " not in folder.stdout and "model_source" not in folder.stdout
    commit = site["repositories"][SHARDED]["commit"]
    for output, read_from in ((from_hub.stdout, "hub"), (from_cache.stdout, "huggingface_cache")):
        assert commit in output  # the commit read is recorded
        if output.startswith("{"):
            assert '"read_from": "%s"' % read_from in output
            assert_valid(json.loads(output))
    assert without_origin(from_hub.stdout, site) == without_origin(folder.stdout, site)
    assert without_origin(from_cache.stdout, site) == without_origin(folder.stdout, site)


def test_a_revision_is_read_at_its_commit_and_verbose_counts_the_requests(site):
    tag = site["repositories"][SINGLE]["refs"]["v1.0"]
    result = run(site, "predict", "--model", SINGLE + "@v1.0", *PREDICT, "--format", "json", "--verbose",
                 cwd=site["root"])
    assert result.returncode == 0, result.stderr
    source = json.loads(result.stdout)["configuration"]["model_source"]
    assert source == {"read_from": "hub", "repository": SINGLE, "revision": "v1.0", "commit": tag,
                      "location": site["endpoint"]}
    text = run(site, "predict", "--model", SINGLE + "@v1.0", *PREDICT, cwd=site["root"])
    assert "LlamaForCausalLM (1 layers," in text.stdout  # v1.0's config.json, not main's 2 layers
    assert "\nModel: %s @ v1.0, commit %s (the Hugging Face Hub at %s: config.json and safetensors headers only)\n" % (
        SINGLE, tag, site["endpoint"]) in text.stdout
    # config.json, then the index (404) and model.safetensors together, the safetensors file
    # a redirect and its answer: 4 requests.
    assert result.stderr.startswith("iteragpu: read %s at commit %s from %s: 4 HTTP requests, " %
                                    (SINGLE, tag, site["endpoint"])), result.stderr
    assert result.stderr.count("\n") == 1


def test_a_gated_repository_needs_a_token_with_access_and_the_token_never_leaves_the_hub_host(site):
    gated = "iteragpu-test/gated-llama"
    refused = run(site, "estimate", "--checkpoint", gated)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "--checkpoint: %s/config.json: a gated repository (HTTP 401); set HF_TOKEN" % gated in refused.stderr
    assert refused.stderr.count("\n") == 1
    wrong = run(site, "estimate", "--checkpoint", gated, HF_TOKEN="hf_someone_else")
    assert wrong.returncode == 2 and "the token from HF_TOKEN has no access" in wrong.stderr, wrong.stderr
    # The token file huggingface_hub writes ($HF_HOME/token), sent to the Hub host only: the
    # CDN host answers 400 to a request that carries it.
    home = os.path.join(site["empty_cache"], "token-home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "token"), "w") as f:
        f.write(hub.GATED_TOKEN + "\n")
    allowed = run(site, "estimate", "--checkpoint", gated, HF_HOME=home)
    assert allowed.returncode == 0, allowed.stderr
    assert "Model: %s, commit" % gated in allowed.stdout


FAULTS = [
    # (repository or None, environment, exit code, what the one line says)
    ("iteragpu-test/no-such-model", {}, 2, "--model: iteragpu-test/no-such-model: no such repository on"),
    (SINGLE + "@no-such-branch", {}, 2, "no revision 'no-such-branch' (HTTP 404)"),
    ("iteragpu-test/fault-ignore-range", {}, 4, "the server ignored the range request); stopped reading"),
    ("iteragpu-test/fault-truncated", {}, 4, "the answer was cut short"),
    ("iteragpu-test/fault-wrong-content-range", {}, 4, "asked bytes 0-99999, the answer says 'bytes 1-100000/"),
    ("iteragpu-test/fault-redirect-loop", {}, 4, "more than 8 redirects (a redirect loop)"),
    ("iteragpu-test/fault-stall", {"--timeout": "0.5"}, 4, "no complete answer within 0.5 s (--timeout)"),
    ("iteragpu-test/fault-no-commit", {}, 4, "config.json: the answer names no commit"),
    ("iteragpu-test/shard-outside", {}, 2, "not a file name beside the index"),
    ("iteragpu-test/huge-header", {}, 2, "200000000"),
    (SINGLE, {"HF_ENDPOINT": "http://127.0.0.1:1"}, 4, "config.json: cannot connect"),
    (SINGLE, {"HF_ENDPOINT": "https://127.0.0.1:{port}"}, 4, "config.json: TLS failure"),
    (SINGLE, {"HF_HUB_OFFLINE": "1"}, 2, "HF_HUB_OFFLINE forbids reading it from the Hub"),
]


@pytest.mark.parametrize("repository,environment,code,says", FAULTS, ids=[f[3][:40] for f in FAULTS])
def test_every_failure_is_one_line_with_its_exit_code_and_nothing_written(site, tmp_path, repository, environment,
                                                                          code, says):
    options = [v for k, v in environment.items() if k.startswith("--") for v in (k, v)]
    env = {k: v.format(port=site["port"]) for k, v in environment.items() if not k.startswith("--")}
    start = time.monotonic()
    result = run(site, "predict", "--model", repository, *PREDICT, *options, cwd=str(tmp_path), **env)
    assert (result.returncode, result.stdout) == (code, ""), result.stderr
    assert says in result.stderr, result.stderr
    assert result.stderr.startswith("iteragpu predict: error: ") and result.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []
    assert time.monotonic() - start < 20  # a 10 GiB answer is cut off, a stalled one timed out


def test_measure_needs_the_weights_in_the_cache(site, tmp_path):
    result = run(site, "measure", "--model", SINGLE, "--output", str(tmp_path / "m.json"), cwd=str(tmp_path))
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "not complete in the Hugging Face cache, and measure loads the weights; download them first with " \
           "`hf download %s` (huggingface_hub)" % SINGLE in result.stderr
    assert os.listdir(tmp_path) == []


def test_a_bad_timeout_and_hub_options_without_a_checkpoint_are_refused(site):
    result = run(site, "predict", "--model", SINGLE, *PREDICT, "--timeout", "0")
    assert result.returncode == 2 and "--timeout: '0' is not a timeout" in result.stderr, result.stderr
    result = run(site, "predict", *PREDICT[:2], "--timeout", "5")
    assert result.returncode == 2 and "--timeout: needs --model" in result.stderr, result.stderr
    result = run(site, "estimate", "--parameters", "7B", "--bits", "16", "--verbose")
    assert result.returncode == 2 and "--verbose: goes with --checkpoint" in result.stderr, result.stderr


def test_python_reads_a_hub_id_and_raises_hub_unreachable(site, monkeypatch):
    import iteragpu

    monkeypatch.setenv("HF_ENDPOINT", site["endpoint"])
    monkeypatch.setenv("HF_HUB_CACHE", site["empty_cache"])
    prediction = iteragpu.predict(model=SHARDED, compute_capability="9.0", batch=2, context=64, new_tokens=4)
    folder = iteragpu.predict(model=os.path.join(site["folders"], SHARDED), compute_capability="9.0", batch=2,
                              context=64, new_tokens=4)
    assert prediction.to_text().split("\n")[1].startswith("Model: %s, commit " % SHARDED)
    assert [p.end.reserved_bytes for p in prediction.phases] == [p.end.reserved_bytes for p in folder.phases]
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1")
    with pytest.raises(iteragpu.HubUnreachable) as raised:
        iteragpu.predict(model=SINGLE, compute_capability="9.0")
    assert isinstance(raised.value, ConnectionError) and "cannot connect" in str(raised.value)


def test_measure_runs_a_complete_cache_snapshot_and_records_its_commit(site, tmp_path):
    """With the test double of the LibTorch plugin: the worker finds the cached weights again
    from the id, and the measurement file names the commit it measured."""
    output = str(tmp_path / "m.json")
    result = run(site, "measure", "--model", SHARDED, "--new-tokens", "2", "--output", output, "--backend",
                 os.environ["ITERAGPU_FAKE_BACKEND_PLUGIN"], cwd=str(tmp_path), HF_HUB_CACHE=site["cache"],
                 HF_HUB_OFFLINE="1")
    assert result.returncode == 0, result.stderr
    with open(output) as f:
        document = json.load(f)
    assert_valid(document)
    snapshot = os.path.join(site["cache"], "models--iteragpu-test--tiny-llama-sharded", "snapshots",
                            site["repositories"][SHARDED]["commit"])
    assert document["configuration"]["model"] == SHARDED
    assert document["configuration"]["model_source"] == {
        "read_from": "huggingface_cache", "repository": SHARDED, "revision": "main",
        "commit": site["repositories"][SHARDED]["commit"], "location": snapshot}


def test_python_bounds_each_request_by_its_timeout_keyword(site, monkeypatch):
    import iteragpu

    monkeypatch.setenv("HF_ENDPOINT", site["endpoint"])
    monkeypatch.setenv("HF_HUB_CACHE", site["empty_cache"])
    start = time.monotonic()
    with pytest.raises(iteragpu.HubUnreachable, match=r"no complete answer within 0\.25 s \(--timeout\)"):
        iteragpu.estimate(checkpoint="iteragpu-test/fault-stall", timeout=0.25)
    with pytest.raises(iteragpu.HubUnreachable, match=r"within 0\.25 s"):
        iteragpu.predict(model="iteragpu-test/fault-stall", compute_capability="9.0", timeout="0.25")
    assert time.monotonic() - start < 10
    with pytest.raises(iteragpu.UsageError, match="timeout: '0' is not a timeout"):
        iteragpu.packages(model=SINGLE, timeout=0)


def test_sweep_and_measure_of_a_cache_snapshot_are_those_of_its_folder(site, tmp_path):
    """The two commands that load weights, with the test double of the LibTorch plugin: the
    sweep's report (host times masked as the recorded outputs mask them) and the measurement's
    counters, configuration and checkpoint record are the folder's."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "golden"))
    from mask_outputs import mask_times

    fake = ["--backend", os.environ["ITERAGPU_FAKE_BACKEND_PLUGIN"], "--new-tokens", "2"]
    cache = {"HF_HUB_CACHE": site["cache"], "HF_HUB_OFFLINE": "1"}
    sweep = ["sweep", "--model", SINGLE, "--vary", "context", "--budget", "200000000", *fake]
    folder, cached = run(site, *sweep), run(site, *sweep, cwd=str(tmp_path), **cache)
    assert folder.returncode == 0 and cached.returncode == 0, folder.stderr + cached.stderr
    assert without_origin(mask_times(cached.stdout), site) == mask_times(folder.stdout)
    documents = []
    for where, environment in ((site["folders"], {}), (str(tmp_path), cache)):
        output = os.path.join(str(tmp_path), "m-%d.json" % len(documents))
        result = run(site, "measure", "--model", SINGLE, "--output", output, *fake, cwd=where, **environment)
        assert result.returncode == 0, result.stderr
        with open(output) as f:
            documents.append(json.load(f))
    folder_file, cache_file = documents
    assert "model_source" not in folder_file["configuration"]
    assert cache_file["configuration"].pop("model_source")["read_from"] == "huggingface_cache"
    assert cache_file["configuration"] == folder_file["configuration"]
    assert cache_file["decoder_model"] == folder_file["decoder_model"]
    counters = [{k: v for k, v in row.items() if not k.endswith("seconds")} for row in folder_file["phases"]]
    assert [{k: v for k, v in row.items() if not k.endswith("seconds")} for row in cache_file["phases"]] == counters

"""What can be checked of ``deploy/`` without a Docker engine or a cluster.

- The compose file validates against the Compose Specification's JSON schema (the copy ``check-jsonschema``
  vendors), the Kubernetes manifests against Kubernetes' own schemas (``kubernetes-validate``, strict: unknown
  fields fail), both offline.
- Everything they ask of tempo-agents exists: each command parses with the CLI's own parser and its ``--help``
  runs, each environment variable is one the package reads, each probe path answers on the API, each port is the
  one the command listens on, the search attributes are the ones the runs set.
- The Dockerfile builds its wheel from what it copies, and its entry commands run from that wheel.
- What ``kubectl apply -f deploy/kubernetes/`` applies holds no example Secret; compose hard-codes no password and
  publishes Temporal (which has no authentication) on 127.0.0.1 only; every pod has probes and a disruption budget.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from tempo_agents import App
from tempo_agents.cli import _options
from tempo_agents.cli.main import build_parser
from tempo_agents.cli.serve import api_tokens
from tempo_agents.encryption import KEYS_ENVIRONMENT_VARIABLE
from tempo_agents.server import create_server
from tempo_agents.store.url import STORE_ENV
from tempo_agents.telemetry.api_route import METRICS_PATH
from tempo_agents.workflows import search_attributes
from tests.support.http_api import parity_agent

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose" / "compose.yaml"
KUBERNETES = DEPLOY / "kubernetes"
EXAMPLES = DEPLOY / "examples"
EXAMPLE_SECRET = EXAMPLES / "kubernetes-secret.yaml"
COMPOSE_ENV_EXAMPLE = EXAMPLES / "compose.env"
DOCKERFILE = DEPLOY / "Dockerfile"
KUBERNETES_VERSION = "1.32"
"""The oldest Kubernetes the manifests are checked against (every field they use exists there)."""
API_PORT = 4111
SEARCH_ATTRIBUTES = sorted(key.name for key in search_attributes.ALL)

PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
"""Read by the model adapters (``api_key_env``); checked against the source below."""
PYTHON_ENV = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")
PACKAGE_ENV = {
    STORE_ENV,
    _options.TOKEN_ENV,
    _options.APP_ENV,
    _options.ADDRESS_ENV,
    _options.NAMESPACE_ENV,
    _options.API_KEY_ENV,
    _options.TLS_ENV,
    _options.TLS_CERT_ENV,
    _options.TLS_KEY_ENV,
    _options.TLS_CA_ENV,
    _options.TLS_SERVER_NAME_ENV,
    KEYS_ENVIRONMENT_VARIABLE,
}


# Reading the files --------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def manifests() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(KUBERNETES.glob("*.yaml")):
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    return docs


def manifest(kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in manifests() if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def example_secret() -> dict[str, Any]:
    """The Secret the pods read, as its example shows it (outside the directory ``kubectl apply -f`` takes)."""
    (doc,) = [d for d in yaml.safe_load_all(EXAMPLE_SECRET.read_text()) if d is not None]
    assert doc["kind"] == "Secret"
    return dict(doc)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def dockerfile(instruction: str) -> list[str]:
    return [args for name, args in dockerfile_instructions() if name == instruction]


def own_services() -> dict[str, dict[str, Any]]:
    """The compose services that run the tempo-agents image."""
    return {name: s for name, s in compose()["services"].items() if str(s.get("image", "")).startswith("tempo-agents")}


def own_containers() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(Deployment, container)`` for every container running the tempo-agents image."""
    found = []
    for doc in manifests():
        if doc["kind"] == "Deployment":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                if container["image"].startswith("tempo-agents"):
                    found.append((doc, container))
    return found


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def parse_command(args: list[str], env: dict[str, str]) -> Any:
    """Parse a container's command with the CLI's parser, under the container's environment (for the defaults)."""
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        return build_parser().parse_args(args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


# Schemas ------------------------------------------------------------------------------------------


def test_the_compose_file_follows_the_compose_specification() -> None:
    schema_file = resources.files("check_jsonschema") / "builtin_schemas" / "vendor" / "compose-spec.json"
    schema = json.loads(schema_file.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(compose())]
    assert errors == []


def test_the_compose_schema_check_can_fail() -> None:
    schema_file = resources.files("check_jsonschema") / "builtin_schemas" / "vendor" / "compose-spec.json"
    validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text()))
    broken = compose()
    broken["services"]["worker"]["stop_grace_period"] = {"seconds": 40}
    broken["services"]["api"]["helthcheck"] = {}
    assert len(list(validator.iter_errors(broken))) >= 2


@pytest.mark.parametrize("doc", manifests(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_follows_the_kubernetes_schema(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_kubernetes_schema_check_can_fail() -> None:
    worker = manifest("Deployment", "tempo-agents-worker")
    worker["spec"]["template"]["spec"]["terminationGracePeriod"] = 60
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(worker, KUBERNETES_VERSION, strict=True)


def test_the_manifests_hold_what_a_deployment_needs() -> None:
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in manifests())
    assert kinds == [
        ("ConfigMap", "tempo-agents"),
        ("Deployment", "tempo-agents-api"),
        ("Deployment", "tempo-agents-worker"),
        ("HorizontalPodAutoscaler", "tempo-agents-worker"),
        ("Job", "tempo-agents-search-attributes"),
        ("PodDisruptionBudget", "tempo-agents-api"),
        ("PodDisruptionBudget", "tempo-agents-worker"),
        ("Service", "tempo-agents-api"),
    ]


def test_the_example_secret_is_not_applied_with_the_manifests() -> None:
    """``kubectl apply -f deploy/kubernetes/`` (as the deploying guide says, after creating the real Secret) must not
    overwrite it with published placeholder values."""
    applied = [path for path in KUBERNETES.rglob("*") if path.is_file()]
    assert applied and all(path.suffix == ".yaml" for path in applied)
    assert [d["kind"] for d in manifests() if d["kind"] == "Secret"] == []
    for path in applied:
        assert "CHANGE-ME" not in path.read_text(), f"{path.name} holds a placeholder secret"
    secret = example_secret()
    kubernetes_validate.validate(secret, KUBERNETES_VERSION, strict=True)
    assert secret["metadata"]["name"] == "tempo-agents"
    guide = (ROOT / "docs" / "how-to" / "deploying.md").read_text()
    assert "kubectl apply -f deploy/kubernetes/" in guide and "deploy/examples/kubernetes-secret.yaml" in guide


# Commands -----------------------------------------------------------------------------------------


def entry_commands() -> list[tuple[str, list[str], dict[str, str]]]:
    """Every tempo-agents command line of the Dockerfile, the compose file and the manifests, with its env."""
    (entrypoint,) = [json.loads(a) for a in dockerfile("ENTRYPOINT")]
    assert entrypoint == ["tempo-agents"]
    image_env = dict(re.findall(r"(\w+)=(\S+)", " ".join(dockerfile("ENV"))))
    commands = [("Dockerfile CMD", json.loads(args), image_env) for args in dockerfile("CMD")]
    other = re.findall(r"^# Other role: CMD (\[.*\])$", DOCKERFILE.read_text(), re.M)
    commands += [("Dockerfile other role", json.loads(args), image_env) for args in other]
    for name, service in own_services().items():
        env = {**image_env, **{k: str(v) for k, v in service["environment"].items()}}
        commands.append((f"compose {name}", service["command"], env))
    config = manifest("ConfigMap", "tempo-agents")["data"]
    secret = example_secret()["stringData"]
    for deployment, container in own_containers():
        from_secret = {e["name"]: secret[e["valueFrom"]["secretKeyRef"]["key"]] for e in container.get("env", [])}
        env = {**image_env, **config, **{k: v for k, v in from_secret.items() if v}}
        commands.append((f"{deployment['metadata']['name']}", container["args"], env))
    return commands


def test_every_role_has_its_command() -> None:
    roles = {label: args[0] for label, args, _ in entry_commands()}
    assert roles == {
        "Dockerfile CMD": "serve",
        "Dockerfile other role": "worker",
        "compose worker": "worker",
        "compose api": "serve",
        "tempo-agents-api": "serve",
        "tempo-agents-worker": "worker",
    }


@pytest.mark.parametrize("label,args,env", entry_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_command_parses_with_the_cli(label: str, args: list[str], env: dict[str, str]) -> None:
    parsed = parse_command(args, env)
    assert parsed.app == env[_options.APP_ENV], f"{label}: no --app, so $TEMPO_AGENTS_APP must be set"
    assert parsed.address == env[_options.ADDRESS_ENV]
    if args[0] == "serve":
        assert (parsed.api_host, parsed.api_port) == ("0.0.0.0", API_PORT)
        # On every interface serve wants a token (it refuses to start otherwise): the container must bring one.
        # The bare image gets it from `docker run -e`, as its header says.
        if label.startswith("Dockerfile"):
            assert f"-e {_options.TOKEN_ENV}=" in DOCKERFILE.read_text()
            env = {**env, _options.TOKEN_ENV: "from-docker-run"}
        saved = dict(os.environ)
        try:
            os.environ.update(env)
            assert api_tokens(parsed), f"{label}: no API token"
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.mark.timeout(360)  # a wheel build in an isolated environment, an install and a Python per command: ~25 s of
# CPU, and over the suite's 120 s on a busy two-core machine (its own subprocess timeouts still guard each step)
def test_the_entry_commands_run_from_the_wheel_the_dockerfile_builds(tmp_path: Path) -> None:
    """Build the wheel from exactly what the build stage copies, install it alone, run each command with --help."""
    copied = [args.split() for args in dockerfile("COPY") if not args.startswith("--")]
    source = tmp_path / "src"
    source.mkdir()
    for *sources, _destination in copied:
        for name in sources:
            target = source / name
            if (ROOT / name).is_dir():
                subprocess.run(["cp", "-r", str(ROOT / name), str(target)], check=True)
            else:
                target.write_bytes((ROOT / name).read_bytes())
    for cache in source.rglob("__pycache__"):
        subprocess.run(["rm", "-rf", str(cache)], check=True)
    wheels = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", str(source), "-w", str(wheels)], check=True, timeout=300)
    (wheel,) = wheels.glob("tempo_agents-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        assert "tempo-agents = tempo_agents.cli:main" in archive.read(entry_points).decode()
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True, timeout=300)
    run_script = "import sys; sys.argv[0] = 'tempo-agents'; import tempo_agents, tempo_agents.cli as c; "
    run_script += f"assert tempo_agents.__file__.startswith({str(site)!r}), tempo_agents.__file__; c.main()"
    for label, args, env in entry_commands():
        result = subprocess.run(
            [sys.executable, "-c", run_script, *args, "--help"],
            cwd=tmp_path,
            env={**os.environ, **env, "PYTHONPATH": str(site)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"{label}: {shlex.join(args)} --help failed:\n{result.stderr}"
        for flag in (a for a in args if a.startswith("--")):
            assert flag in result.stdout, f"{label}: {flag} is not an option of tempo-agents {args[0]}"


# Environment, ports, probes -----------------------------------------------------------------------


def test_every_environment_variable_is_one_the_package_reads() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "tempo_agents").rglob("*.py"))
    for key in PROVIDER_KEYS:
        assert f'"{key}"' in source, f"no model adapter reads {key}"
    known = PACKAGE_ENV | set(PROVIDER_KEYS) | set(PYTHON_ENV)
    used: dict[str, set[str]] = {"Dockerfile": set(re.findall(r"(\w+)=", " ".join(dockerfile("ENV"))))}
    for name, service in own_services().items():
        used[f"compose {name}"] = set(service["environment"])
    used["ConfigMap"] = set(manifest("ConfigMap", "tempo-agents")["data"])
    for deployment, container in own_containers():
        used[deployment["metadata"]["name"]] = {e["name"] for e in container.get("env", [])}
    for where, names in used.items():
        assert names <= known, f"{where} sets {sorted(names - known)}, which nothing reads"


def test_secrets_and_config_the_pods_refer_to_exist() -> None:
    secret = example_secret()
    for deployment, container in own_containers():
        for ref in container.get("envFrom", []):
            manifest("ConfigMap", ref["configMapRef"]["name"])
        for env in container.get("env", []):
            ref = env["valueFrom"]["secretKeyRef"]
            assert ref["name"] == secret["metadata"]["name"]
            assert ref["key"] in secret["stringData"], f"{deployment['metadata']['name']}: no key {ref['key']}"
        names = {e["name"] for e in container.get("env", [])}
        assert STORE_ENV in names, "the store URL comes from the Secret"
        if container["args"][0] == "serve":
            assert _options.TOKEN_ENV in names, "the API's token comes from the Secret"
    worker_env = {e["name"] for e in manifest("Deployment", "tempo-agents-worker")["spec"]["template"]["spec"][
        "containers"][0]["env"]}  # fmt: skip
    assert set(PROVIDER_KEYS) <= worker_env, "the workers call the models"


def test_workers_and_the_api_read_the_same_encryption_keys() -> None:
    """A payload a worker seals the API must open (and the other way round): every pod takes the keys from the
    same key of the Secret."""
    refs = {
        deployment["metadata"]["name"]: [
            env["valueFrom"]["secretKeyRef"] for env in container["env"] if env["name"] == KEYS_ENVIRONMENT_VARIABLE
        ]
        for deployment, container in own_containers()
    }
    assert set(refs) == {"tempo-agents-api", "tempo-agents-worker"}
    expected = [{"name": "tempo-agents", "key": "encryption-keys", "optional": True}]
    assert all(found == expected for found in refs.values())
    assert example_secret()["stringData"]["encryption-keys"] == ""  # nothing to copy by mistake


async def test_probe_and_healthcheck_paths_answer_on_the_api_and_ports_match(tmp_path: Path) -> None:
    api = manifest("Deployment", "tempo-agents-api")["spec"]["template"]["spec"]
    (container,) = api["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": int(option(container["args"], "--api-port"))}
    paths = []
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get["port"] in ports
        paths.append(get["path"])
    service = manifest("Service", "tempo-agents-api")["spec"]
    assert service["selector"] == manifest("Deployment", "tempo-agents-api")["spec"]["selector"]["matchLabels"]
    assert [p["targetPort"] for p in service["ports"]] == ["http"]
    compose_api = compose()["services"]["api"]
    assert compose_api["ports"] == [f"{API_PORT}:{option(compose_api['command'], '--api-port')}"]
    (healthcheck,) = dockerfile("HEALTHCHECK")
    checks = [healthcheck, " ".join(compose_api["healthcheck"]["test"])]
    for text in checks:
        url = re.search(r"http://127\.0\.0\.1:(\d+)(/\S*?)'", text)
        assert url is not None, text
        assert int(url.group(1)) == API_PORT
        paths.append(url.group(2))
    assert container["readinessProbe"]["httpGet"]["path"] == "/api/ready", "ready while the store answers"
    assert container["livenessProbe"]["httpGet"]["path"] == "/api/health", "alive whatever the store does"
    # With a token configured, as deployed: the probes carry none, so their path must be open.
    app = App(agents=[parity_agent()], store=f"sqlite:///{tmp_path / 'store.db'}")
    transport = httpx.ASGITransport(app=create_server(app, tokens={"secret-token": "api"}))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        for path in set(paths):
            response = await http.get(path)
            assert response.status_code == 200, path
        assert (await http.get("/openapi.json")).status_code == 401, "the token check is not on"
    assert set(paths) == {"/api/health", "/api/ready"}


def test_every_pod_has_probes_and_a_disruption_budget() -> None:
    budgets = [d for d in manifests() if d["kind"] == "PodDisruptionBudget"]
    for deployment, container in own_containers():
        name = deployment["metadata"]["name"]
        ports = {p["name"] for p in container["ports"]}
        for probe in ("readinessProbe", "livenessProbe"):
            assert probe in container, f"{name} has no {probe}"
            check = container[probe].get("httpGet") or container[probe].get("tcpSocket")
            assert check is not None and check["port"] in ports, f"{name}: {probe} on a port the pod does not have"
        labels = deployment["spec"]["selector"]["matchLabels"]
        (budget,) = [b for b in budgets if b["spec"]["selector"]["matchLabels"] == labels]
        assert 0 < budget["spec"]["minAvailable"] < deployment["spec"]["replicas"], name
    # A worker waits a store outage out: neither of its probes may depend on the store (or restart it meanwhile).
    (worker,) = manifest("Deployment", "tempo-agents-worker")["spec"]["template"]["spec"]["containers"]
    assert worker["livenessProbe"]["tcpSocket"] == worker["readinessProbe"]["tcpSocket"] == {"port": "metrics"}
    hpa = manifest("HorizontalPodAutoscaler", "tempo-agents-worker")["spec"]
    (worker_budget,) = [b for b in budgets if b["metadata"]["name"] == "tempo-agents-worker"]
    assert worker_budget["spec"]["minAvailable"] < hpa["minReplicas"]


def test_compose_publishes_temporal_on_this_machine_only() -> None:
    services = compose()["services"]
    for name in ("temporal", "temporal-ui"):
        for port in services[name]["ports"]:
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"
    for name, service in services.items():
        if name != "api":  # the API asks every request for its token
            for port in service.get("ports", []):
                assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"


def test_compose_hard_codes_no_password() -> None:
    required = set(re.findall(r"\$\{(\w+):\?", COMPOSE.read_text()))
    assert {"TEMPORAL_DB_PASSWORD", "TEMPO_AGENTS_DB_PASSWORD", _options.TOKEN_ENV} <= required
    services = compose()["services"]
    secrets = [
        services["postgresql"]["environment"]["POSTGRES_PASSWORD"],
        services["temporal"]["environment"]["POSTGRES_PWD"],
        services["worker"]["environment"][STORE_ENV].split("://", 1)[1].split("@", 1)[0].split(":", 1)[1],
    ]
    for value in secrets:
        assert re.fullmatch(r"\$\{\w+:\?[^}]+\}", value), f"a hard-coded secret: {value!r}"
    init = (COMPOSE.parent / "postgres-init.sh").read_text()
    assert "PASSWORD :'password'" in init and "$TEMPO_AGENTS_DB_PASSWORD" in init
    example = dict(
        line.split("=", 1) for line in COMPOSE_ENV_EXAMPLE.read_text().splitlines() if line and line[0] != "#"
    )
    assert required <= set(example), "the example .env names every variable compose requires"


def test_worker_metrics_ports_match_the_metrics_option() -> None:
    worker = manifest("Deployment", "tempo-agents-worker")["spec"]["template"]
    (container,) = worker["spec"]["containers"]
    port = int(option(container["args"], "--metrics-port"))
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": port}
    annotations = worker["metadata"]["annotations"]
    assert (annotations["prometheus.io/port"], annotations["prometheus.io/path"]) == (str(port), METRICS_PATH)
    compose_worker = compose()["services"]["worker"]
    assert compose_worker["expose"] == [option(compose_worker["command"], "--metrics-port")]


# Graceful shutdown, scaling, search attributes, image --------------------------------------------


def test_workers_get_longer_to_stop_than_their_graceful_timeout() -> None:
    pod = manifest("Deployment", "tempo-agents-worker")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["terminationGracePeriodSeconds"] > float(option(container["args"], "--graceful-timeout"))
    assert container["resources"]["requests"] and container["resources"]["limits"]
    worker = compose()["services"]["worker"]
    grace = int(worker["stop_grace_period"].removesuffix("s"))
    assert grace > float(option(worker["command"], "--graceful-timeout"))
    assert "deploy" not in worker and "container_name" not in worker, "docker compose --scale worker=N must work"
    hpa = manifest("HorizontalPodAutoscaler", "tempo-agents-worker")["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "tempo-agents-worker"}
    assert 1 < hpa["minReplicas"] < hpa["maxReplicas"]


def test_the_setup_jobs_register_exactly_the_search_attributes_the_runs_set() -> None:
    job = compose()["services"]["search-attributes"]
    (k8s,) = manifest("Job", "tempo-agents-search-attributes")["spec"]["template"]["spec"]["containers"]
    for image, script in ((job["image"], job["command"][0]), (k8s["image"], k8s["args"][0])):
        assert image.startswith("temporalio/admin-tools:")
        names = re.search(r"for name in ([\w ]+); do", script)
        assert names is not None and sorted(names.group(1).split()) == SEARCH_ATTRIBUTES
        assert "temporal operator search-attribute create" in script and "--type Keyword" in script
    own = {name for name in own_services()}
    for name in own:
        depends = compose()["services"][name]["depends_on"]
        assert depends["search-attributes"] == {"condition": "service_completed_successfully"}


def test_temporal_runs_on_the_postgresql_of_the_compose_file_with_official_images() -> None:
    services = compose()["services"]
    assert services["temporal"]["image"].startswith("temporalio/auto-setup:")
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["temporal"]["environment"]["POSTGRES_SEEDS"] == "postgresql"
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    store = services["worker"]["environment"][STORE_ENV]
    assert store.startswith("postgresql://") and "@postgresql:5432/tempo_agents" in store
    init = (COMPOSE.parent / "postgres-init.sh").read_text()
    assert "CREATE DATABASE tempo_agents" in init
    mounted = [v for v in services["postgresql"]["volumes"] if "postgres-init.sh" in v]
    assert mounted and mounted[0].split(":")[1].startswith("/docker-entrypoint-initdb.d/")


def test_the_image_runs_as_a_non_root_user_from_a_built_wheel() -> None:
    stages = dockerfile("FROM")
    assert len(stages) == 2 and stages[0].endswith(" AS build")
    (user,) = dockerfile("USER")
    assert user.split(":")[0] not in ("root", "0")
    runs = " ".join(dockerfile("RUN"))
    assert "python -m build --wheel" in runs and ".whl)[postgresql,telemetry]" in runs
    assert any("--from=build" in args for args in dockerfile("COPY"))
    assert dockerfile("EXPOSE") == [str(API_PORT)]

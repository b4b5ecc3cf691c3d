"""The Dockerfile and docker-compose.yml, checked without a Docker engine.

The image cannot be built here (no registry for base images), so its commands are run as they are written,
in a fresh virtual environment standing in for the image's Python: the build stage's COPY lines lay out the
context, its `pip wheel` builds the wheels, the runtime stage's `pip install` installs them, and then the
image's ENTRYPOINT + CMD (`parley serve`) runs and its own HEALTHCHECK command must pass, before SIGTERM ends
it. Only container paths are moved (each stage's `/` becomes a folder); the commands keep their meaning.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import yaml
from sqlalchemy.engine import make_url

from agent import RunStatus, TerminationReason
from bot.core import JobsConfig, OwnershipConfig, ReviewConfig
from bot.settings import Settings
from bot.web import HEALTH_PATH
from tests.fakes.llm_server import FakeLLMServer
from tests.serving import free_port, server_process, terminate

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "docker-compose.yml"
INSTALL_TIMEOUT_S = 420  # one venv, all wheels built and installed from the configured package index
COMMAND_TIMEOUT_S = 60
STOP_S = 15

# --- the Dockerfile, parsed --------------------------------------------------------------------------------


@dataclass
class Stage:
    name: str | None
    base: str
    instructions: list[tuple[str, str]] = field(default_factory=list)  # (KEYWORD, arguments)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]

    def last(self, keyword: str) -> str | None:
        found = self.all(keyword)
        return found[-1] if found else None


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages of instructions: comment lines dropped, `\\` continuations joined (Docker's own rules)."""
    logical: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.strip().startswith("#") or (not line.strip() and not pending):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line.strip())
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            base, _, name = args.partition(" AS ") if " AS " in args else args.partition(" as ")
            stages.append(Stage(name.strip() or None, base.strip()))
        else:
            assert stages, f"{keyword} before FROM"
            stages[-1].instructions.append((keyword, args))
    return stages


def exec_form(args: str) -> list[str]:
    """CMD/ENTRYPOINT/HEALTHCHECK CMD as the engine runs them: JSON exec form, or the shell form via sh -c."""
    if args.startswith("["):
        value = json.loads(args)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
        return value
    return ["/bin/sh", "-c", args]


@dataclass(frozen=True)
class HealthCheck:
    options: dict[str, str]
    command: list[str]

    def seconds(self, option: str) -> float:
        value = self.options[option]
        assert value.endswith("s"), f"--{option}={value}: this test reads seconds only"
        return float(value[:-1])


def health_check(args: str) -> HealthCheck:
    match = re.fullmatch(r"((?:--[a-z-]+=\S+\s+)*)CMD\s+(.+)", args, flags=re.DOTALL)
    assert match, f"HEALTHCHECK {args!r} is not `[--option=value …] CMD command`"
    options = dict(option[2:].split("=", 1) for option in match.group(1).split())
    return HealthCheck(options, exec_form(match.group(2)))


def env_pairs(args: str) -> dict[str, str]:
    words = shlex.split(args)
    if words and "=" not in words[0]:  # the legacy `ENV NAME value` form
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words)


def copy_args(args: str) -> tuple[dict[str, str], list[str], str]:
    """COPY [--option=value …] SRC… DEST → (options, sources, destination)."""
    words = json.loads(args) if args.startswith("[") else shlex.split(args)
    options = {}
    while words and words[0].startswith("--"):
        name, _, value = words.pop(0)[2:].partition("=")
        options[name] = value
    assert len(words) >= 2, f"COPY {args!r}"
    return options, words[:-1], words[-1]


STAGES = parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))
BUILD, RUNTIME = STAGES[0], STAGES[-1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def settings_variables() -> set[str]:
    """Every environment variable Settings reads: PARLEY_<FIELD>, or the field's own alias (SLACK_*, PORT)."""
    prefix = Settings.model_config.get("env_prefix", "")
    names = set()
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        names.add(alias if isinstance(alias, str) else f"{prefix}{name}".upper())
    return names


# --- static checks: fast, no venv -------------------------------------------------------------------------


def test_build_stage_copies_everything_the_wheel_packs():
    """hatchling refuses to build when a force-included path is missing (it was: migrations/)."""
    copied = {Path(source).as_posix().rstrip("/") for args in BUILD.all("COPY") for source in copy_args(args)[1]}
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = {"pyproject.toml", PYPROJECT["project"]["readme"], *wheel["packages"], *wheel["force-include"]}
    assert needed <= copied, f"the build stage does not COPY {sorted(needed - copied)}"


def test_dockerignore_keeps_what_the_build_copies():
    patterns = dockerignore_patterns()
    for args in BUILD.all("COPY"):
        for source in copy_args(args)[1]:
            assert not dockerignored(source.strip("/"), patterns), f".dockerignore drops {source}, which is copied"


def test_every_run_is_a_command_this_test_knows():
    for stage in STAGES:
        for command in stage.all("RUN"):
            assert command.split()[0] in {"pip", "useradd"}, f"RUN {command!r}: teach tests/test_dockerfile.py"


def test_the_image_serves_unprivileged_on_the_port_settings_use():
    assert RUNTIME.last("USER") not in (None, "root", "0"), "the image must not run as root"
    start = exec_form(RUNTIME.last("ENTRYPOINT") or "[]") + exec_form(RUNTIME.last("CMD") or "[]")
    assert start == ["parley", "serve"]
    assert "parley" in PYPROJECT["project"]["scripts"]
    env = {k: v for args in RUNTIME.all("ENV") for k, v in env_pairs(args).items()}
    assert RUNTIME.last("EXPOSE") == env["PORT"] == str(Settings.model_fields["port"].default)
    check = health_check(RUNTIME.last("HEALTHCHECK") or "")
    shell = " ".join(check.command)
    assert HEALTH_PATH in shell and "PORT" in shell, shell
    inner = re.search(r"timeout=(\d+(?:\.\d+)?)\)", shell)
    assert inner and float(inner.group(1)) < check.seconds("timeout"), "the request must give up before Docker does"


# --- the image's commands, run in one fresh venv ----------------------------------------------------------


def clean_environment(**extra: str) -> dict[str, str]:
    """This environment without Parley's, Slack's or this checkout's Python settings (pip's are kept)."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PORT"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("PARLEY_", "SLACK_"))}
    return env | extra


@dataclass
class Image:
    root: Path  # one folder per stage stands for that stage's `/`
    venv: Path
    roots: dict[str, Path]
    env: dict[str, str]  # the runtime stage's ENV
    workdir: Path
    log: list[str]

    def inside(self, stage: str, path: str, workdir: str = "/") -> Path:
        absolute = path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"
        return self.roots[stage] / os.path.normpath(absolute).lstrip("/")

    def environment(self, **extra: str) -> dict[str, str]:
        """The container's environment: the image's ENV, HOME in its WORKDIR, the venv's Python first on PATH."""
        home = self.workdir
        return clean_environment(
            **(
                self.env
                | {
                    "HOME": str(home),
                    "XDG_DATA_HOME": str(home / ".local/share"),
                    "XDG_CONFIG_HOME": str(home / ".config"),
                    "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                }
                | extra
            )
        )


def dockerignored(relative: str, patterns: list[str]) -> bool:
    """Docker's .dockerignore matching, as far as this repository needs it: `name`, `dir/`, `*.ext`, `**/name`."""
    for pattern in patterns:
        pattern = pattern.strip("/")
        if pattern.startswith("**/"):
            if any(fnmatch.fnmatch(part, pattern[3:]) for part in relative.split("/")):
                return True
        elif fnmatch.fnmatch(relative, pattern) or relative.startswith(pattern + "/"):
            return True
    return False


def dockerignore_patterns() -> list[str]:
    file = REPO / ".dockerignore"
    lines = file.read_text(encoding="utf-8").splitlines() if file.is_file() else []
    patterns = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    assert not any(p.startswith("!") for p in patterns), "exceptions (!) in .dockerignore: teach this test"
    return patterns


def _copy(source: Path, target: Path, context: Path | None) -> None:
    """COPY of one source; from the build context, what .dockerignore drops is left out."""
    patterns = dockerignore_patterns() if context is not None else []

    def ignored(folder: str, names: list[str]) -> set[str]:
        if context is None:
            return set()
        base = Path(folder).relative_to(context).as_posix()
        return {name for name in names if dockerignored(f"{base}/{name}".removeprefix("./"), patterns)}

    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=ignored)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _rebase(command: str, root: Path) -> str:
    """Container paths in a shell command → the stage's folder (`/wheels/*.whl` → `ROOT/wheels/*.whl`)."""
    return re.sub(r"(?<![\w:/.~-])/(?=[\w.])", lambda _: f"{root}/", command)


def build(root: Path) -> Image:
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=COMMAND_TIMEOUT_S)
    image = Image(root, venv, {}, {}, root, [])
    for number, stage in enumerate(STAGES):
        key = stage.name or str(number)
        image.roots[key] = root / f"stage-{number}"
        image.roots[key].mkdir()
        workdir, env = "/", {}
        for keyword, args in stage.instructions:
            if keyword == "WORKDIR":
                workdir = os.path.normpath(args if args.startswith("/") else f"{workdir}/{args}")
                image.inside(key, workdir).mkdir(parents=True, exist_ok=True)
            elif keyword == "ENV":
                env |= env_pairs(args)
            elif keyword == "COPY":
                options, sources, dest = copy_args(args)
                origin = REPO if "from" not in options else image.roots[options["from"]]
                for source in sources:
                    src = origin / source.lstrip("/")
                    target = image.inside(key, dest, workdir)
                    if src.is_file() and (dest.endswith("/") or len(sources) > 1):
                        target = target / src.name
                    _copy(src, target, REPO if origin == REPO else None)
            elif keyword == "RUN" and args.split()[0] == "useradd":
                image.log.append(f"skipped (a user of the image's own): RUN {args}")
            elif keyword == "RUN":
                command = _rebase(args, image.roots[key])
                started = time.monotonic()
                done = subprocess.run(
                    ["/bin/sh", "-c", command],
                    cwd=image.inside(key, workdir),
                    env=clean_environment(**env, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"),
                    capture_output=True,
                    text=True,
                    timeout=INSTALL_TIMEOUT_S,
                    check=False,
                )
                assert done.returncode == 0, f"RUN {args}\n(as {command})\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                image.log.append(f"{time.monotonic() - started:5.1f}s RUN {command}")
        image.env, image.workdir = env, image.inside(key, workdir)
    return image


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    return build(tmp_path_factory.mktemp("image"))


@pytest.fixture(scope="module")
def migrated(image: Image) -> tuple[str, subprocess.CompletedProcess[str]]:
    """`parley db upgrade` (the ENTRYPOINT with `db upgrade`, as compose's migrate service runs it)."""
    database = image.root / "store" / "parley.db"
    database.parent.mkdir()
    url = f"sqlite:///{database}"
    command = [*exec_form(RUNTIME.last("ENTRYPOINT") or "[]"), "db", "upgrade"]
    done = subprocess.run(
        command,
        cwd=image.workdir,
        env=image.environment(PARLEY_DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    return url, done


@pytest.mark.timeout(600)
def test_the_image_build_installs_parley_from_its_own_wheel(image: Image):
    [wheel] = (image.roots[BUILD.name or "0"] / "wheels").glob("parley-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    assert {"bot/migrations/env.py", "bot/defaults/parley.yaml", "bot/defaults/errors.yaml"} <= packed
    assert not (image.roots[RUNTIME.name or str(len(STAGES) - 1)] / "wheels").exists(), "the wheels stay behind"
    where = subprocess.run(
        ["python", "-c", "import bot, agent; print(bot.__file__); print(agent.__file__)"],
        cwd=image.workdir,
        env=image.environment(),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=True,
    )
    for module in where.stdout.split():
        assert Path(module).is_relative_to(image.venv), f"imported from outside the installed wheel: {module}"


@pytest.mark.timeout(600)
def test_the_installed_parley_migrates_a_fresh_database(migrated):
    url, done = migrated
    assert done.returncode == 0, done.stderr
    assert "(up to date)" in done.stdout, done.stdout
    assert Path(make_url(url).database or "").is_file()


@pytest.mark.timeout(600)
def test_the_image_command_passes_its_own_healthcheck_and_stops_on_sigterm(image: Image, migrated, tmp_path: Path):
    url, upgraded = migrated
    assert upgraded.returncode == 0, upgraded.stderr
    check = health_check(RUNTIME.last("HEALTHCHECK") or "")
    start = exec_form(RUNTIME.last("ENTRYPOINT") or "[]") + exec_form(RUNTIME.last("CMD") or "[]")
    port = free_port()
    with FakeLLMServer() as llm:
        env = image.environment(
            PORT=str(port),  # the image's ENV PORT, moved to a free port: the check must follow it
            PARLEY_DATABASE_URL=url,
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_SIGNING_SECRET="x",
            PARLEY_LLM_BASE_URL=llm.base_url,
            PARLEY_LLM_MODEL="test-model",
            NO_PROXY="127.0.0.1,localhost",
        )
        stderr = tmp_path / "serve.stderr"
        with server_process(start, env=env, cwd=image.workdir, stderr=stderr) as server:
            # The check as Docker runs it, in the container's environment; a proxy must not catch it.
            check_env = env | {"http_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
            check_env.pop("NO_PROXY")

            def healthcheck(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    check.command,
                    env=environment,
                    cwd=image.workdir,
                    capture_output=True,
                    text=True,
                    timeout=check.seconds("timeout"),
                    check=False,
                )

            started = time.monotonic()
            while (result := healthcheck(check_env)).returncode != 0:
                if server.poll() is not None:
                    raise AssertionError(f"parley serve exited with {server.returncode}:\n{stderr.read_text()}")
                if time.monotonic() - started > check.seconds("start-period"):
                    raise AssertionError(f"not healthy within the start period:\n{result.stderr}\n{stderr.read_text()}")
                time.sleep(0.2)
            report = httpx.get(f"http://127.0.0.1:{port}{HEALTH_PATH}", timeout=5, trust_env=False).json()
            assert report["database"] == "ok" and report["llm"] == "ok", report

            # The same check against a port nobody serves fails: it measures something.
            assert healthcheck(check_env | {"PORT": str(free_port())}).returncode != 0

            terminate(server, STOP_S)
    errors = stderr.read_text(encoding="utf-8")
    # The front finishes its shutdown, then the runtime stops; SIGTERM is a clean exit (as PID 1 in a container).
    assert server.returncode == 0, errors
    assert "Finished server process" in errors and "Traceback" not in errors, errors


# --- docker-compose.yml ----------------------------------------------------------------------------------

INTERPOLATION = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}`, `${VAR:?error}` (enough of it for these checks)."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if op and op.endswith("?"):
            raise KeyError(f"{name}: {arg}")
        return arg if op else ""

    return INTERPOLATION.sub(one, value)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def test_compose_runs_postgres_a_one_off_migration_and_parley(compose):
    services = compose["services"]
    assert set(services) == {"postgres", "migrate", "parley"}
    postgres, migrate, parley = services["postgres"], services["migrate"], services["parley"]

    image, _, tag = postgres["image"].partition(":")
    assert image == "postgres" and tag.split(".")[0].split("-")[0] == "15"
    volume, target = postgres["volumes"][0].split(":")[:2]
    assert volume in compose["volumes"] and target == "/var/lib/postgresql/data"  # a named volume
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])

    for service in (migrate, parley):
        assert service["build"] in (".", {"context": "."}) and service["image"] == parley["image"]
    assert migrate["command"] == ["db", "upgrade"]
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert parley["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }
    assert parley.get("command", exec_form(RUNTIME.last("CMD") or "[]")) == exec_form(RUNTIME.last("CMD") or "[]")


def test_compose_parley_matches_the_image_and_settings(compose):
    parley, postgres = compose["services"]["parley"], compose["services"]["postgres"]
    env: dict[str, str | None] = parley["environment"]

    unknown = set(env) - settings_variables()
    assert not unknown, f"docker-compose.yml sets variables Parley does not read: {sorted(unknown)}"
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "PARLEY_LLM_BASE_URL", "PARLEY_LLM_MODEL"):
        assert str(env[name]).startswith(f"${{{name}:?"), f"{name} must be required from the host"
    blank = [name for name, value in env.items() if value == "" or str(value).endswith(":-}")]
    assert not blank, f"an empty value overrides Parley's default; pass these through bare: {blank}"

    image_port = RUNTIME.last("EXPOSE")
    assert env["PORT"] == image_port
    assert all(str(mapping).rsplit(":", 1)[-1] == image_port for mapping in parley["ports"])
    if "healthcheck" in parley:  # the image's own is used; an override must ask the same thing
        assert parley["healthcheck"]["test"][1:] == health_check(RUNTIME.last("HEALTHCHECK") or "").command[2:]

    url = make_url(interpolate(env["PARLEY_DATABASE_URL"] or "", {}))
    pg_env = {k: interpolate(v, {}) for k, v in postgres["environment"].items()}
    assert url.get_backend_name() == "postgresql" and url.host == "postgres"
    assert (url.username, url.password, url.database) == (
        pg_env["POSTGRES_USER"],
        pg_env["POSTGRES_PASSWORD"],
        pg_env["POSTGRES_DB"],
    )
    assert compose["services"]["migrate"]["environment"]["PARLEY_DATABASE_URL"] == env["PARLEY_DATABASE_URL"]
    with pytest.raises(KeyError, match="SLACK_BOT_TOKEN"):
        interpolate(str(env["SLACK_BOT_TOKEN"]), {})


# --- README.md: the operator's reference names everything it must ------------------------------------------


def test_the_operating_section_covers_every_variable_key_reason_and_status():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "\n## Operating Parley\n" in readme
    section = readme.split("\n## Operating Parley\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([^`\n]+)`", re.sub(r"^```.*$", "", section, flags=re.MULTILINE)))
    wanted = {
        *settings_variables(),
        *(f"review.{key}" for key in ReviewConfig.model_fields),
        *(f"jobs.{key}" for key in JobsConfig.model_fields),
        *(f"ownership.{key}" for key in OwnershipConfig.model_fields),
        *(reason.value for reason in TerminationReason),
        *(status.value for status in RunStatus),
        *("runs", "steps", "tool_calls", "verdicts", "escalations", "audit_events", "job_leases", "run_owners"),
        "policies",
        "parley db upgrade",
    }
    assert wanted <= named, f"README.md's Operating Parley does not name {sorted(wanted - named)}"

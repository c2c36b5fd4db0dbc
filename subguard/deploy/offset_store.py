"""Where a BROADCASTING consumer keeps its offsets at runtime, and whether they survive a restart.

Facts (rocketmq-semantics §5, §8):
- Java remoting clients: `LocalFileOffsetStore` writes `<dir>/<clientId>/<group>/offsets.json`;
  `<dir>` is `-Drocketmq.client.localOffsetStoreDir`, default `${user.home}/.rocketmq_offsets`.
  The clientId is `<clientIP>@<instanceName>`; the IP is the host's address unless code calls
  `setClientIP` (no property overrides it); BROADCASTING keeps instanceName `DEFAULT` (or
  `-Drocketmq.client.name` / `setInstanceName`). rocketmq-spring 2.2.0-2.2.2 and the SCA binder
  (>= 2.2.7) put the pid and a timestamp into the instance name.
- C++-core Python clients: `$HOME/.rocketmq_offsets/<ip>@<instanceName>/<group>/offsets.Json`;
  only `HOME` moves it and nothing sets the IP.
All functions are pure; a value that cannot be known is None, with the reason in the text.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from subguard.core.model import CPP_FAMILIES, ClientFamily, Consumer, Deployment, Mount, Resolution
from subguard.deploy import jvm_options as jvm
from subguard.deploy.manifest_values import CONTAINER_IP, FIELD_REF, HOST_IP, NODE_IP, POD_IP, parse_ref, under
from subguard.rocketmq.client_versions import UNSTABLE, is_unstable

JAVA_LOCAL_STORE_FAMILIES = frozenset(
    {
        ClientFamily.JAVA_PUSH_4X,
        ClientFamily.JAVA_LITE_PULL,
        ClientFamily.JAVA_PULL,
        ClientFamily.SPRING_LISTENER,
        ClientFamily.SPRING_LITE_PULL,
        ClientFamily.SPRING_CLOUD_STREAM,
    }
)
OFFSETS = ".rocketmq_offsets"
ROOT_HOME = "/root"


def local_store(consumer: Consumer) -> str:
    """`java`, `cpp` or "" (no local offset file: clustering, or a gRPC client)."""
    if consumer.message_model.value != "BROADCASTING":
        return ""
    if consumer.client in JAVA_LOCAL_STORE_FAMILIES:
        return "java"
    if consumer.client in CPP_FAMILIES:
        return "cpp"
    return ""


@dataclass(frozen=True)
class OffsetDir:
    """The offset directory of one consumer in one deployment."""

    text: str  # the directory as the client computes it, for messages
    persistent: bool | None
    why: str  # how the verdict was reached
    mount: Mount | None = None


def _literal(value: str | None) -> str | None:
    """A usable absolute path, or None when it still refers to variables or is relative."""
    if not value or jvm.references(value) or parse_ref(value) or not value.startswith("/"):
        return None
    return posixpath.normpath(value)


def _covering(path: str, mounts: tuple[Mount, ...]) -> Mount | None:
    found = [m for m in mounts if under(path, m.path)]
    return max(found, key=lambda m: len(posixpath.normpath(m.path))) if found else None


def _judge(path: str, how: str, dep: Deployment) -> OffsetDir:
    mount = _covering(path, dep.mounts)
    if mount is None:
        return OffsetDir(
            path, False, f"{how}; no volume is mounted there, so it lives in the container's own filesystem"
        )
    kind = mount.volume_kind or "volume"
    name = f"{kind} '{mount.volume}'" if mount.volume else kind
    if mount.persistent is None:
        return OffsetDir(path, None, f"{how}; it is on {name} at {mount.path}, whose persistence is unknown", mount)
    state = "persistent" if mount.persistent else "not persistent"
    return OffsetDir(path, mount.persistent, f"{how}; it is on {name} at {mount.path} ({state})", mount)


def offset_dir(consumer: Consumer, dep: Deployment) -> OffsetDir | None:
    """The offset directory and its persistence; None when the consumer keeps no local offsets."""
    store = local_store(consumer)
    if not store:
        return None
    env = dict(dep.env)
    if store == "java":
        configured = dep.jvm_option(jvm.OFFSET_DIR)
        if configured is not None:
            path = _literal(configured)
            if path is None:
                return OffsetDir(configured, None, f"-D{jvm.OFFSET_DIR}={configured} is not a literal absolute path")
            return _judge(path, f"-D{jvm.OFFSET_DIR}={configured}", dep)
        home_opt = dep.jvm_option(jvm.USER_HOME)
        if home_opt is not None:
            home = _literal(home_opt)
            if home is None:
                return OffsetDir(
                    f"{home_opt}/{OFFSETS}", None, f"-D{jvm.USER_HOME}={home_opt} is not a literal absolute path"
                )
            return _judge(f"{home}/{OFFSETS}", f"default ${{user.home}}/{OFFSETS} with -Duser.home={home_opt}", dep)
        return _unknown_home(dep, f"no -D{jvm.OFFSET_DIR}: default ${{user.home}}/{OFFSETS}")
    home_env = env.get("HOME")
    if home_env is not None:
        home = _literal(home_env)
        if home is None:
            return OffsetDir(f"$HOME/{OFFSETS}", None, f"HOME={home_env} is not a literal absolute path")
        return _judge(f"{home}/{OFFSETS}", f"C++ client: $HOME/{OFFSETS} with HOME={home_env}", dep)
    return _unknown_home(dep, f"C++ client: $HOME/{OFFSETS}, HOME not set")


def _unknown_home(dep: Deployment, how: str) -> OffsetDir:
    """The home directory is the container user's; a mount of a `.rocketmq_offsets` directory or a
    home directory is taken as that home, otherwise root's home `/root` is assumed."""
    for m in dep.mounts:
        base = posixpath.basename(posixpath.normpath(m.path))
        parent = posixpath.dirname(posixpath.normpath(m.path))
        if base == OFFSETS:
            return _judge(posixpath.normpath(m.path), f"{how}, taking user.home = {parent} from the mount", dep)
        if parent == "/home":
            return _judge(
                f"{posixpath.normpath(m.path)}/{OFFSETS}", f"{how}, taking user.home = {m.path} from the mount", dep
            )
    return _judge(f"{ROOT_HOME}/{OFFSETS}", f"{how}, so the home directory is {ROOT_HOME} (a root container)", dep)


# --- client id ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientId:
    """Whether `<ip>@<instanceName>` (the directory under the offset dir) survives a restart."""

    stable: bool | None
    ip: str  # explanation of the IP part
    instance: str  # explanation of the instance-name part


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def _env_var(detail: str, env: dict[str, str]) -> str | None:
    """The environment variable a code value reads, if its detail names one the deployment sets."""
    names: list[str] = _ENV_NAME.findall(detail)
    return next((n for n in names if n in env), None)


def _env_ip(name: str, value: str, dep: Deployment) -> tuple[bool | None, str]:
    ref = parse_ref(value)
    if ref is None:
        if jvm.references(value):
            return None, f"setClientIP(${name}) with {name}={value}, which is not a literal"
        return True, f"setClientIP(${name}) with {name}={value} (fixed)"
    source, detail = ref
    if source != FIELD_REF:
        return None, f"setClientIP(${name}) from {source} {detail}, not visible in the scan"
    if detail == "metadata.name":
        stable = dep.kind == "StatefulSet"
        what = (
            "the StatefulSet pod's name, stable across restarts"
            if stable
            else f"the {dep.kind} pod's name, new for every pod"
        )
        return stable, f"setClientIP(${name}) = {what}"
    if detail in ("spec.nodeName", "status.hostIP"):
        stable = dep.kind == "DaemonSet"
        return (
            stable,
            f"setClientIP(${name}) = the node ({detail}){'' if stable else ', which changes when the pod moves'}",
        )
    return False, f"setClientIP(${name}) = {detail}, which changes when the pod is re-created"


def _runtime_ip(dep: Deployment) -> tuple[bool | None, str]:
    ip = dep.client_ip
    if ip is None or ip.value is None:
        return None, "the container's IP (how it is assigned is not known)"
    if ip.value in (POD_IP, CONTAINER_IP):
        return False, f"the {'pod' if ip.value == POD_IP else 'container'} IP, which changes when it is re-created"
    if ip.value == NODE_IP:
        stable = dep.kind == "DaemonSet"
        return stable, "the node IP (hostNetwork)" + (
            "" if stable else ", which changes when the pod moves to another node"
        )
    if ip.value == HOST_IP:
        return True, "the host's IP (network_mode: host)"
    return True, f"the fixed address {ip.value} ({ip.detail})"


def _ip(consumer: Consumer, dep: Deployment, store: str) -> tuple[bool | None, str]:
    ip = consumer.client_ip
    if store == "java" and ip is not None:
        env = dict(dep.env)
        if ip.resolution == Resolution.ENV_DEFAULT and ip.detail in env:
            return _env_ip(ip.detail, env[ip.detail], dep)
        if ip.known:
            return True, f'setClientIP("{ip.value}")'
        name = _env_var(ip.detail, env)
        if name is not None:
            return _env_ip(name, env[name], dep)
        return None, f"setClientIP with a value not known statically ({ip.detail or 'dynamic'})"
    stable, text = _runtime_ip(dep)
    if store == "cpp":
        text += "; the C++ client has no way to set it"
    return stable, text


def _instance(consumer: Consumer, dep: Deployment) -> tuple[bool | None, str]:
    name = consumer.instance_name
    if is_unstable(name):  # a version-specific name with a timestamp (client_versions)
        return False, name.detail.removesuffix(UNSTABLE).strip() if name is not None else ""
    if consumer.client == ClientFamily.SPRING_CLOUD_STREAM and name is None:
        return (
            False,
            "the Spring Cloud Stream RocketMQ binder puts the pid and a timestamp into the instance name (2.2.10, 2021.0.5.0, 2022.0.0.0 and later)",
        )
    if name is not None and not name.known:
        return None, f"instance name not known statically ({name.detail or 'dynamic'})"
    if name is not None and name.value and name.resolution != Resolution.DEFAULT:
        return True, f"instance name '{name.value}'"
    option = dep.jvm_option(jvm.CLIENT_NAME) if consumer.client in JAVA_LOCAL_STORE_FAMILIES else None
    if option is not None:
        return True, f"instance name '{option}' (-D{jvm.CLIENT_NAME})"
    if consumer.client == ClientFamily.SPRING_LISTENER:
        return (
            True,
            "instance name DEFAULT (rocketmq-spring 2.2.3+; 2.2.0 used nameServer@pid, 2.2.1-2.2.2 nameServer@pid@nanoTime)",
        )
    return True, "instance name DEFAULT"


def client_id(consumer: Consumer, dep: Deployment) -> ClientId:
    """Stability of the client id that names the offset sub-directory."""
    store = local_store(consumer) or "java"
    ip_stable, ip_text = _ip(consumer, dep, store)
    inst_stable, inst_text = _instance(consumer, dep)
    if ip_stable is False or inst_stable is False:
        stable: bool | None = False
    elif ip_stable is None or inst_stable is None:
        stable = None
    else:
        stable = True
    return ClientId(stable, ip_text, inst_text)

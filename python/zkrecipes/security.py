"""TLS, SASL and ACL options of a ``Client``.

``Client("zk1:2281", tls=Tls(ca="ca.pem", cert="client.pem", key="client-key.pem"),
sasl=Sasl.digest_md5("alice", "secret"), acl="creator")``.
"""

from __future__ import annotations

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Union

from . import _native

#: A path (``str`` or ``os.PathLike``) or the PEM itself (``bytes``).
PemSource = Union[str, "os.PathLike[str]", bytes]


def _pem(value: Optional[PemSource], name: str) -> Union[str, bytes, None]:
    """A path stays a ``str``; PEM (``bytes``, or a ``str`` holding a PEM header) goes as ``bytes``."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, str) and _native._pem_is_text(value):
        return value.encode()  # PEM text (or a damaged piece of it): never a path, never printed
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"tls {name} must be a path, PEM text or PEM bytes, got {type(value).__name__}")


class Tls:
    """TLS to every server. Files given as paths are re-read when they change (rotation)."""

    __slots__ = ("ca", "cert", "key", "verify_hostname")

    def __init__(
        self,
        ca: PemSource,
        cert: Optional[PemSource] = None,
        key: Optional[PemSource] = None,
        verify_hostname: bool = True,
    ) -> None:
        """``ca``: the CA bundle to trust; ``cert``/``key``: a client certificate for mutual TLS.
        ``verify_hostname=False`` accepts any host name the CA signed: unsafe against a man in the middle."""
        if not isinstance(verify_hostname, bool):
            raise TypeError("verify_hostname must be a bool")
        if ca is None:
            raise TypeError("tls needs ca: the CA bundle to trust (a path, PEM text or PEM bytes)")
        self.ca = _pem(ca, "ca")
        self.cert = _pem(cert, "cert")
        self.key = _pem(key, "key")
        self.verify_hostname = verify_hostname

    def __repr__(self) -> str:
        shown = lambda v: "<PEM>" if isinstance(v, bytes) else repr(v)  # noqa: E731
        return f"Tls(ca={shown(self.ca)}, cert={shown(self.cert)}, key={shown(self.key)}, verify_hostname={self.verify_hostname})"


class Sasl:
    """SASL authentication: ``Sasl.digest_md5(user, password)`` or ``Sasl.gssapi()`` (Kerberos)."""

    __slots__ = ("mechanism", "username", "_password", "service", "host", "principal", "keytab")

    def __init__(
        self,
        mechanism: str,
        username: Optional[str] = None,
        password: Union[str, bytes, None] = None,
        service: Optional[str] = None,
        host: Optional[str] = None,
        principal: Optional[str] = None,
        keytab: Union[str, "os.PathLike[str]", None] = None,
    ) -> None:
        """A mechanism by name (``"DIGEST-MD5"``, ``"GSSAPI"``); ``digest_md5`` and ``gssapi`` read better."""
        if keytab is not None and isinstance(keytab, os.PathLike):
            keytab = os.fspath(keytab)
        for name, value in (
            ("mechanism", mechanism),
            ("username", username),
            ("service", service),
            ("host", host),
            ("principal", principal),
            ("keytab", keytab),
        ):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"sasl {name} must be a str, got {type(value).__name__}")
        if password is not None and not isinstance(password, (str, bytes)):
            raise TypeError(f"sasl password must be str or bytes, got {type(password).__name__}")
        self.mechanism = mechanism
        self.username = username
        self._password = password.encode() if isinstance(password, str) else password
        self.service = service
        self.host = host
        self.principal = principal
        self.keytab = keytab

    @classmethod
    def digest_md5(cls, username: str, password: Union[str, bytes]) -> Sasl:
        """A user of the server's JAAS ``Server`` section (``DigestLoginModule``)."""
        if username is None or password is None:
            raise TypeError("Sasl.digest_md5 needs a username and a password")
        return cls("DIGEST-MD5", username, password)

    @classmethod
    def gssapi(
        cls,
        service: str = "zookeeper",
        host: Optional[str] = None,
        principal: Optional[str] = None,
        keytab: Union[str, "os.PathLike[str]", None] = None,
    ) -> Sasl:
        """Kerberos. By default with the process's credentials: the ticket cache (``KRB5CCNAME``)
        or a client keytab (``KRB5_CLIENT_KTNAME``). ``principal`` (``name@REALM``) and ``keytab``
        give this client an identity of its own, as a JAAS ``Client`` section does: two clients
        of one process can log in as two principals. ``host`` is the server principal's host
        part (default: the server connected to)."""
        return cls("GSSAPI", service=service, host=host, principal=principal, keytab=keytab)

    def __reduce__(self) -> tuple:
        # pickle (and copy) would write the password in clear into whatever stores the pickle.
        if self._password is not None:
            raise TypeError(
                "a Sasl with a password cannot be pickled (the pickle would hold the password in clear): "
                "pass the username and read the password where the Client is made"
            )
        return (Sasl, (self.mechanism, self.username, None, self.service, self.host, self.principal, self.keytab))

    def __copy__(self) -> Sasl:
        return Sasl(
            self.mechanism, self.username, self._password, self.service, self.host, self.principal, self.keytab
        )

    def __deepcopy__(self, memo: dict) -> Sasl:
        return self.__copy__()

    def __repr__(self) -> str:
        if self.mechanism == "GSSAPI":
            given = [f"service={self.service!r}", f"host={self.host!r}"]
            given += [f"{k}={v!r}" for k, v in (("principal", self.principal), ("keytab", self.keytab)) if v is not None]
            return f"Sasl.gssapi({', '.join(given)})"
        return f"Sasl.digest_md5({self.username!r}, <password>)"


class Acl(NamedTuple):
    """One ACL entry: ``Acl("rwcda", "sasl", "alice")``; ``perms`` as letters, ``"all"`` or bits (1 to 31)."""

    perms: Union[str, int]
    scheme: str
    id: str


#: ``"open"``, ``"creator"``, ``"creator-world-read"``, or a list of ``Acl``.
AclPolicy = Union[str, Sequence[Acl]]


def _settings(tls: Optional[Tls], sasl: Optional[Sasl], acl: Optional[AclPolicy]) -> Optional[Dict[str, object]]:
    """The dict the native module takes; every check of the values is the core's."""
    if tls is None and sasl is None and acl is None:
        return None
    if tls is not None and not isinstance(tls, Tls):
        raise TypeError(f"tls must be a zkrecipes.Tls, got {type(tls).__name__}")
    if sasl is not None and not isinstance(sasl, Sasl):
        raise TypeError(f"sasl must be a zkrecipes.Sasl, got {type(sasl).__name__}")
    entries: Optional[List[tuple]] = None
    policy: Optional[str] = None
    if isinstance(acl, Acl):
        acl = [acl]  # one entry is a list of one, not the tuple's three fields
    if isinstance(acl, str):
        policy = acl
    elif acl is not None:
        if not isinstance(acl, (list, tuple)):
            raise TypeError(
                "acl must be 'open', 'creator', 'creator-world-read' or a list of zkrecipes.Acl, "
                f"got {type(acl).__name__}"
            )
        entries = []
        for entry in acl:
            if not isinstance(entry, tuple) or len(entry) != 3:
                raise TypeError(f"acl entries must be zkrecipes.Acl(perms, scheme, id), got {entry!r}")
            perms, scheme, id = entry
            if isinstance(perms, bool) or not isinstance(perms, (str, int)):
                raise TypeError(f"acl perms must be letters or an int, got {type(perms).__name__}")
            if not isinstance(scheme, str) or not isinstance(id, str):
                raise TypeError("acl scheme and id must be str")
            entries.append((str(perms), scheme, id))
    return {
        "tls_ca": tls.ca if tls else None,
        "tls_cert": tls.cert if tls else None,
        "tls_key": tls.key if tls else None,
        "tls_verify_hostname": tls.verify_hostname if tls else None,
        "sasl_mechanism": sasl.mechanism if sasl else None,
        "sasl_username": sasl.username if sasl else None,
        "sasl_password": sasl._password if sasl else None,
        "sasl_service": sasl.service if sasl else None,
        "sasl_host": sasl.host if sasl else None,
        "sasl_principal": sasl.principal if sasl else None,
        "sasl_keytab": sasl.keytab if sasl else None,
        "acl_policy": policy,
        "acl_entries": entries,
    }

'use strict'
// The tls, sasl and acl options as the native module takes them; the core checks the values.

const { requireString } = require('./base.js')

// A PEM as tls.connect takes it (PEM text or Buffer), or a path; the core tells them apart.
function pem (name, value) {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' || Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value)
  throw new TypeError(`tls.${name} must be a path, PEM text or a Buffer`)
}

// `tls`, `sasl` and `acl` as the native module takes them; the core checks the values.
function security (tls, sasl, acl) {
  const out = {}
  if (tls !== undefined && tls !== null) {
    if (typeof tls !== 'object') throw new TypeError('tls must be { ca, cert?, key?, verifyHostname? }')
    for (const key of Object.keys(tls)) {
      if (!['ca', 'cert', 'key', 'verifyHostname'].includes(key)) throw new TypeError(`unknown tls option ${key}: ca, cert, key, verifyHostname`)
    }
    if (tls.ca === undefined || tls.ca === null) throw new TypeError('tls.ca is required: the CA bundle to trust')
    out.tlsCa = pem('ca', tls.ca)
    out.tlsCert = pem('cert', tls.cert)
    out.tlsKey = pem('key', tls.key)
    if (tls.verifyHostname !== undefined && typeof tls.verifyHostname !== 'boolean') {
      throw new TypeError('tls.verifyHostname must be a boolean')
    }
    out.tlsVerifyHostname = tls.verifyHostname
  }
  if (sasl !== undefined && sasl !== null) {
    if (typeof sasl !== 'object') throw new TypeError("sasl must be { mechanism: 'DIGEST-MD5' | 'GSSAPI', ... }")
    // A misspelt key (`user`, `pass`) would otherwise connect without it and fail far from the typo.
    for (const key of Object.keys(sasl)) {
      if (!['mechanism', 'username', 'password', 'service', 'host', 'principal', 'keytab'].includes(key)) {
        throw new TypeError(`unknown sasl option ${key}: mechanism, username, password, service, host, principal, keytab`)
      }
    }
    out.saslMechanism = requireString('sasl.mechanism', sasl.mechanism)
    for (const key of ['username', 'service', 'host', 'principal', 'keytab']) {
      if (sasl[key] !== undefined) requireString(`sasl.${key}`, sasl[key])
    }
    out.saslUsername = sasl.username
    out.saslService = sasl.service
    out.saslHost = sasl.host
    out.saslPrincipal = sasl.principal
    out.saslKeytab = sasl.keytab
    if (sasl.password !== undefined) {
      if (typeof sasl.password !== 'string' && !Buffer.isBuffer(sasl.password)) {
        throw new TypeError('sasl.password must be a string or a Buffer')
      }
      out.saslPassword = Buffer.from(sasl.password)
    }
  }
  if (typeof acl === 'string') {
    out.aclPolicy = acl
  } else if (Array.isArray(acl) || (acl !== null && typeof acl === 'object')) {
    // One entry is a list of one, as in Python.
    out.aclEntries = (Array.isArray(acl) ? acl : [acl]).map((entry) => {
      if (entry === null || typeof entry !== 'object') throw new TypeError('acl entries must be { perms, scheme, id }')
      const { perms, scheme, id } = entry
      if (typeof perms === 'number' && !Number.isInteger(perms)) {
        throw new TypeError(`acl perms ${perms} is not an integer: a bitmask from 1 (read) to 31 (all), or letters of rwcda`)
      }
      if (typeof perms !== 'string' && typeof perms !== 'number') throw new TypeError('acl perms must be letters or a number')
      return { perms: String(perms), scheme: requireString('acl scheme', scheme), id: requireString('acl id', id) }
    })
  } else if (acl !== undefined && acl !== null) {
    throw new TypeError("acl must be 'open', 'creator', 'creator-world-read' or [{ perms, scheme, id }]")
  }
  return out
}

module.exports = { security }

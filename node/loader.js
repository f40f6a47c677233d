'use strict'
// Loads the native addon through napi-rs's generated loader (native.js): the
// `.node` next to this file, else the per-platform package npm installed as an
// optional dependency. When neither fits, says which platform it looked for.

const PREBUILT = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl']

function libc () {
  if (process.platform !== 'linux') return ''
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null
  return report?.header?.glibcVersionRuntime ? '-gnu' : '-musl'
}

function platform () {
  return `${process.platform}-${process.arch}${libc()}`
}

function load () {
  try {
    return require('./native.js')
  } catch (err) {
    const wanted = platform()
    const hint = PREBUILT.includes(wanted)
      ? `npm installs zkrecipes-${wanted} as an optional dependency: reinstall without --omit=optional / --no-optional; ` +
        `installing from tarballs, install zkrecipes-${wanted}-<version>.tgz beside zkrecipes-<version>.tgz`
      : `zkrecipes ships prebuilt addons for ${PREBUILT.join(', ')}; on ${wanted} build the addon from source ` +
        '(README: "Other platforms")'
    const error = new Error(
      `zkrecipes: no native addon for ${wanted} (looked for zkrecipes.${wanted}.node beside the package ` +
        `and for the package zkrecipes-${wanted}). ${hint}.`
    )
    error.code = 'ZKRECIPES_NO_ADDON'
    error.cause = err
    throw error
  }
}

module.exports = { load, platform }

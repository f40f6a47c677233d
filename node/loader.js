'use strict'
// Loads the native addon through napi-rs's generated loader (native.js): the
// `.node` next to this file, else the per-platform package npm installed as an
// optional dependency. When neither fits, says which platform it looked for.

// The platforms with a prebuilt addon package (zkrecipes-<platform>).
const PREBUILT = [
  'linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl',
  'darwin-x64', 'darwin-arm64', 'win32-x64-gnu'
]

function libc () {
  if (process.platform !== 'linux') return ''
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null
  return report?.header?.glibcVersionRuntime ? '-gnu' : '-musl'
}

function platform () {
  const suffix = process.platform === 'win32' ? '-gnu' : libc()
  return `${process.platform}-${process.arch}${suffix}`
}

// The Windows addon is built with the GNU toolchain (MinGW, cross-compiled), and Node.js for
// Windows with MSVC, so napi-rs's loader looks for a `-msvc` addon. An addon only calls Node-API,
// which it finds in the running node.exe, so the GNU build loads into any Node.js for Windows.
function windowsAddon () {
  const tuple = `win32-${process.arch}-gnu`
  try {
    return require(`./zkrecipes.${tuple}.node`)
  } catch {
    return require(`zkrecipes-${tuple}`)
  }
}

function load () {
  try {
    return require('./native.js')
  } catch (err) {
    if (process.platform === 'win32') {
      try {
        return windowsAddon()
      } catch (windowsErr) {
        // An addon that is there but does not load (a damaged file, a Windows older than 10)
        // is said as such: reinstalling the optional package would not help.
        if (windowsErr.code !== 'MODULE_NOT_FOUND') {
          const error = new Error(`zkrecipes: the ${platform()} addon is installed but does not load: ${windowsErr.message}`)
          error.code = 'ZKRECIPES_ADDON_FAILED'
          error.cause = windowsErr
          throw error
        }
      }
    }
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

/* Windows 10's bcryptprimitives.dll, for Debian's wine 8, which lacks it (wine 9 has it).
 *
 * Rust's standard library (1.78 and later) gets random bytes from ProcessPrng in this DLL, so
 * every Rust DLL and EXE imports it, and under wine 8 none of them loads ("Module not found").
 * dist-check builds this with MinGW-w64 into its wine prefix: the one function, over
 * RtlGenRandom (advapi32's SystemFunction036), which wine has. It is never shipped. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    return RtlGenRandom(data, (ULONG)len);
}

package io.zkrecipes.kotlin

import kotlin.time.Duration
import kotlin.time.DurationUnit

/** A timeout as the native layer takes it: `null` waits as long as it takes; the core checks the rest. */
internal fun Duration.toMillisOrNull(): Double? = if (isInfinite() && isPositive()) null else toDouble(DurationUnit.MILLISECONDS)

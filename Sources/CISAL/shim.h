#pragma once
#include <isa-l/igzip_lib.h>

/// The level buffer igzip's level 1 wants for large inputs (a macro Swift
/// cannot import).
static inline uint32_t imago_isal_level1_buffer_size(void) { return ISAL_DEF_LVL1_LARGE; }

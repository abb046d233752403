/* SmartRedis-compatible enumerations (tensor types, memory layouts, metadata types, logging
 * levels), with SmartRedis's names and numeric values so that SmartRedis programs compile
 * unchanged. Usable from C and C++. Part of Slipstream's SmartRedis compatibility layer
 * (docs/smartredis.md). */
#ifndef SMARTREDIS_SR_ENUMS_H
#define SMARTREDIS_SR_ENUMS_H

/* In C++ the enumerations have int as their fixed underlying type, the size a C compiler gives
 * them: a value out of their range that a C caller passes (which the library checks and refuses)
 * is then a valid value of the type rather than undefined behaviour. */
#ifndef SR_ENUM_BASE
#ifdef __cplusplus
#define SR_ENUM_BASE : int
#else
#define SR_ENUM_BASE
#endif
#endif

/* How a tensor's elements lie in the caller's memory. */
typedef enum SR_ENUM_BASE {
  SRMemLayoutInvalid = 0,
  /* Row-major, as nested arrays of pointers (e.g. double** for 2-D); only the innermost level
   * is contiguous. */
  SRMemLayoutNested = 1,
  /* Row-major in one contiguous block. */
  SRMemLayoutContiguous = 2,
  /* Column-major nested arrays: not supported (SRParameterError). */
  SRMemLayoutFortranNested = 3,
  /* Column-major in one contiguous block (what the Fortran client sends; the C API accepts it). */
  SRMemLayoutFortranContiguous = 4
} SRMemoryLayout;

/* Type of a dataset metadata field. */
typedef enum SR_ENUM_BASE {
  SRMetadataTypeInvalid = 0,
  SRMetadataTypeDouble = 1,
  SRMetadataTypeFloat = 2,
  SRMetadataTypeInt32 = 3,
  SRMetadataTypeInt64 = 4,
  SRMetadataTypeUint32 = 5,
  SRMetadataTypeUint64 = 6,
  SRMetadataTypeString = 7
} SRMetaDataType;

/* Element type of a tensor. */
typedef enum SR_ENUM_BASE {
  SRTensorTypeInvalid = 0,
  SRTensorTypeDouble = 1,
  SRTensorTypeFloat = 2,
  SRTensorTypeInt8 = 3,
  SRTensorTypeInt16 = 4,
  SRTensorTypeInt32 = 5,
  SRTensorTypeInt64 = 6,
  SRTensorTypeUint8 = 7,
  SRTensorTypeUint16 = 8
} SRTensorType;

/* Logging levels (SR_LOG_LEVEL: QUIET, INFO, DEBUG, DEVELOPER). A message is written when its
 * level is at most the configured one. */
typedef enum SR_ENUM_BASE {
  LLInvalid = 0,
  LLQuiet = 1,
  LLInfo = 2,
  LLDebug = 3,
  LLDeveloper = 4
} SRLoggingLevel;

#endif /* SMARTREDIS_SR_ENUMS_H */

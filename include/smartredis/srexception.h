/* SmartRedis-compatible errors: the SRError codes the C and Fortran APIs return, the last-error
 * text, and (C++) the exception classes SmartRedis throws, with SmartRedis's names. Part of
 * Slipstream's SmartRedis compatibility layer (docs/smartredis.md). */
#ifndef SMARTREDIS_SRException_H
#define SMARTREDIS_SRException_H

/* What a call of the C or Fortran API returns: SRNoError on success. */
typedef enum {
  SRNoError = 0,        /* success */
  SRBadAllocError = 1,  /* memory could not be allocated */
  SRDatabaseError = 2,  /* the server cannot be reached, or refused the request as a whole */
  SRInternalError = 3,  /* the server's reply made no sense, or a bug in this library */
  SRRuntimeError = 4,   /* the operation failed (error reply, unsupported call, ...) */
  SRParameterError = 5, /* a bad argument (null pointer, shape or type mismatch, ...) */
  SRTimeoutError = 6,   /* a connect or command timeout expired */
  SRKeyError = 7,       /* the key, tensor, dataset, field or option does not exist */
  SRInvalidError = 8,   /* no error has been recorded yet */
  SRTypeError = 9       /* a value of another type than the one asked for */
} SRError;

/* The message of the last error recorded in this thread by the C or Fortran API ("" if none).
 * The text stays valid until the next call of this library in the same thread. */
#ifdef __cplusplus
extern "C"
#endif
    const char*
    SRGetLastError(void);

#ifdef __cplusplus
#include <exception>
#include <string>

namespace SmartRedis {

/* Base of every exception the C++ API throws. what() says what went wrong; where() is the
 * source location when thrown through the SR*Exception macros, otherwise "". */
class Exception : public std::exception {
 public:
  explicit Exception(const char* what_arg) : message_(what_arg) {}
  explicit Exception(const std::string& what_arg) : message_(what_arg) {}
  Exception(const std::string& what_arg, const char* file, int line)
      : message_(what_arg), location_(std::string(file) + ":" + std::to_string(line)) {}
  Exception(const std::exception& other) : message_(other.what()) {}
  ~Exception() override = default;

  /* The SRError code the C API reports for this exception. */
  virtual SRError to_error_code() const noexcept { return SRInvalidError; }
  virtual std::string exception_class() const { return "Exception"; }
  const char* what() const noexcept override { return message_.c_str(); }
  virtual const char* where() const noexcept { return location_.c_str(); }

 protected:
  std::string message_;
  std::string location_;
};

#define SMARTREDIS_DEFINE_EXCEPTION(Name, code)                                   \
  class Name : public Exception {                                                \
   public:                                                                       \
    using Exception::Exception;                                                  \
    SRError to_error_code() const noexcept override { return code; }             \
    std::string exception_class() const override { return #Name; }              \
  };

SMARTREDIS_DEFINE_EXCEPTION(BadAllocException, SRBadAllocError)
SMARTREDIS_DEFINE_EXCEPTION(DatabaseException, SRDatabaseError)
SMARTREDIS_DEFINE_EXCEPTION(RuntimeException, SRRuntimeError)
SMARTREDIS_DEFINE_EXCEPTION(ParameterException, SRParameterError)
SMARTREDIS_DEFINE_EXCEPTION(TimeoutException, SRTimeoutError)
SMARTREDIS_DEFINE_EXCEPTION(InternalException, SRInternalError)
SMARTREDIS_DEFINE_EXCEPTION(KeyException, SRKeyError)
SMARTREDIS_DEFINE_EXCEPTION(TypeException, SRTypeError)

#undef SMARTREDIS_DEFINE_EXCEPTION

/* Throwing with the source location, as SmartRedis's macros do. */
#define SRBadAllocException(txt) SmartRedis::BadAllocException(txt, __FILE__, __LINE__)
#define SRDatabaseException(txt) SmartRedis::DatabaseException(txt, __FILE__, __LINE__)
#define SRRuntimeException(txt) SmartRedis::RuntimeException(txt, __FILE__, __LINE__)
#define SRParameterException(txt) SmartRedis::ParameterException(txt, __FILE__, __LINE__)
#define SRTimeoutException(txt) SmartRedis::TimeoutException(txt, __FILE__, __LINE__)
#define SRInternalException(txt) SmartRedis::InternalException(txt, __FILE__, __LINE__)
#define SRKeyException(txt) SmartRedis::KeyException(txt, __FILE__, __LINE__)
#define SRTypeException(txt) SmartRedis::TypeException(txt, __FILE__, __LINE__)

/* Records `last_error` as this thread's last error (SRGetLastError), for the C API. */
void SRSetLastError(const Exception& last_error);

}  // namespace SmartRedis

#endif /* __cplusplus */
#endif /* SMARTREDIS_SRException_H */

// Test support: a server of one Unix-socket connection that answers each request with what a
// test's script says, for tests of a client against a server it cannot otherwise meet (one of an
// earlier protocol form). Requests are read as clients send them (arrays of bulk strings); a reply
// may pass one file descriptor alongside (SCM_RIGHTS), as the shared-memory path does.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "server_process.hpp"

namespace slipstream::testing {

class ScriptedServer {
 public:
  /// A reply: its RESP bytes and, when `fd` >= 0, a descriptor passed with it (closed after).
  struct Reply {
    std::string bytes;
    int fd = -1;
  };
  /// Called on the serving thread for each request, in order.
  using Script = std::function<Reply(const std::vector<std::string>& args)>;

  explicit ScriptedServer(Script script) : script_(std::move(script)) {
    dir_ = make_temp_dir("slipstream-scripted");
    path_ = dir_ + "/s.sock";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 4) != 0) {
      throw std::runtime_error("scripted server: cannot listen on " + path_);
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(listener_, SHUT_RDWR);
    if (const int client = client_.load(); client >= 0) ::shutdown(client, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
    if (client_ >= 0) ::close(client_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::string address() const { return "unix://" + path_; }

 private:
  void serve() {
    client_ = ::accept(listener_, nullptr, nullptr);
    if (client_ < 0) return;
    std::string in;
    for (;;) {
      std::vector<std::string> args;
      if (!read_request(in, args)) return;
      Reply reply = script_(args);
      iovec part{reply.bytes.data(), reply.bytes.size()};
      msghdr message{};
      message.msg_iov = &part;
      message.msg_iovlen = 1;
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
      if (reply.fd >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &reply.fd, sizeof reply.fd);
      }
      const bool sent = ::sendmsg(client_, &message, MSG_NOSIGNAL) ==
                        static_cast<ssize_t>(reply.bytes.size());
      if (reply.fd >= 0) ::close(reply.fd);
      if (!sent) return;
    }
  }
  // One request (an array of bulk strings) from `in` and the socket.
  bool read_request(std::string& in, std::vector<std::string>& args) {
    std::size_t at = 0;
    auto line = [&](std::string& out) {
      for (;;) {
        auto end = in.find("\r\n", at);
        if (end != std::string::npos) {
          out = in.substr(at, end - at);
          at = end + 2;
          return true;
        }
        if (!fill(in)) return false;
      }
    };
    std::string header;
    if (!line(header) || header.empty() || header[0] != '*') return false;
    for (long long n = std::stoll(header.substr(1)); n > 0; --n) {
      std::string length;
      if (!line(length) || length.empty() || length[0] != '$') return false;
      const std::size_t size = std::stoull(length.substr(1));
      while (in.size() < at + size + 2) {
        if (!fill(in)) return false;
      }
      args.push_back(in.substr(at, size));
      at += size + 2;
    }
    in.erase(0, at);
    return !args.empty();
  }
  bool fill(std::string& in) {
    char chunk[4096];
    const ssize_t got = ::recv(client_, chunk, sizeof chunk, 0);
    if (got <= 0) return false;
    in.append(chunk, static_cast<std::size_t>(got));
    return true;
  }

  Script script_;
  std::string dir_, path_;
  int listener_ = -1;
  std::atomic<int> client_{-1};  // written by the serving thread, shut down by the destructor
  std::thread thread_;
};

}  // namespace slipstream::testing

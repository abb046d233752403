// The model worker's request loop; see worker.hpp.
#include "ml/sandbox/worker.hpp"

#include <cstdio>
#include <functional>
#include <unordered_map>
#include <vector>

#include "ml/sandbox/channel.hpp"
#include "ml/sandbox/control_block.hpp"

namespace slipstream::ml::sandbox {
namespace {

// Runs something small through the backend before the process is confined, so that libtorch's
// lazy start-up (CPU feature probing, thread pools), which reads files under /proc and /sys, is
// done while that is still allowed.
void warm_up(Backend& backend) {
  std::string error;
  auto script = backend.load_script("def warm(x):\n    return (x * 2.0 + 1.0).sum(0)\n",
                                    Device{}, &error);
  if (!script) return;
  std::vector<float> data(1 << 16, 1.0f);
  const std::int64_t shape[] = {256, 256};
  TensorView input{DType::kFloat32, shape, data.data(), data.size() * sizeof(float)};
  std::vector<OwnedTensor> outputs;
  script->run("warm", {&input, 1}, {}, {}, outputs);
}

std::vector<TensorView> views_of(const std::vector<OwnedTensor>& tensors) {
  std::vector<TensorView> views;
  views.reserve(tensors.size());
  for (const auto& t : tensors) views.push_back({t.dtype, t.shape, t.data.data(), t.data.size()});
  return views;
}

class WorkerLoop {
 public:
  WorkerLoop(int fd, Backend& backend) : fd_(fd), reader_(fd), backend_(backend) {
    reader_.accept_files(FileUse::kMapPrivate);  // inputs held in shared memory come mapped
  }

  int run() {
    while (true) {
      if (control_) {  // requests are announced in the block, and most are in it
        Posted where{};
        ChannelError e = control_->receive(reader_, fd_, kNoDeadline, where);
        if (e == ChannelError::kClosed) return 0;
        if (e != ChannelError::kNone) return fail(e);
      }
      MessageType type{};
      std::uint64_t length = 0;
      ChannelError e = reader_.next(kNoDeadline, type, length);
      if (e == ChannelError::kClosed) return 0;  // the server is done with this worker
      if (e != ChannelError::kNone) return fail(e);
      e = handle(type);
      if (e != ChannelError::kNone) return fail(e);
    }
  }

 private:
  int fail(ChannelError e) {
    std::fprintf(stderr, "slipstream ml-worker: %s%s%s\n", channel_error_text(e).data(),
                 reader_.problem().empty() ? "" : ": ", reader_.problem().c_str());
    return 2;
  }

  // Sends a reply: through the control block when there is one and it fits there.
  ChannelError send(MessageWriter& w) {
    return control_ ? control_->send(w, fd_, kNoDeadline) : w.send(fd_, kNoDeadline);
  }

  ChannelError reply_ok() {
    MessageWriter w(MessageType::kOk);
    return send(w);
  }

  ChannelError reply_error(const std::string& message) {
    MessageWriter w(MessageType::kError);
    w.str(message);
    return send(w);
  }

  // `flags`: the run request's (kOutputsInFiles: large outputs go as memory files).
  ChannelError reply_outputs(const Status& status, const std::vector<OwnedTensor>& outputs,
                             std::uint8_t flags) {
    if (!status.ok) return reply_error(status.message);
    MessageWriter w(MessageType::kOutputs);
    w.tensors(std::span<const OwnedTensor>(outputs), (flags & kOutputsInFiles) != 0);
    return send(w);
  }

  ChannelError device_of(Device& device) {
    std::string text;
    if (ChannelError e = reader_.str(text); e != ChannelError::kNone) return e;
    auto parsed = parse_device(text);
    device = parsed.value_or(Device{});
    if (!parsed) device_error_ = "invalid device '" + text + "'";
    return ChannelError::kNone;
  }

  ChannelError handle(MessageType type) {
    std::uint64_t id = 0;
    device_error_.clear();
    switch (type) {
      case MessageType::kDeviceCheck: {
        Device device;
        if (ChannelError e = device_of(device); e != ChannelError::kNone) return e;
        if (!device_error_.empty()) return reply_error(device_error_);
        Status status = backend_.check_device(device);
        if (!status.ok) return reply_error(status.message);
        return reply_ok();
      }
      case MessageType::kLoadModel:
      case MessageType::kLoadOnnxModel: {
        Device device;
        Buffer archive;
        if (ChannelError e = reader_.u64(id); e != ChannelError::kNone) return e;
        if (ChannelError e = device_of(device); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.bytes(archive); e != ChannelError::kNone) return e;
        if (!device_error_.empty()) return reply_error(device_error_);
        std::string error;
        auto model = backend_.load_model(
            archive.view(),
            type == MessageType::kLoadOnnxModel ? ModelFormat::kOnnx : ModelFormat::kTorchScript,
            device, &error);
        if (!model) return reply_error(error);
        models_[id] = std::move(model);
        return reply_ok();
      }
      case MessageType::kLoadScript: {
        Device device;
        std::string source;
        if (ChannelError e = reader_.u64(id); e != ChannelError::kNone) return e;
        if (ChannelError e = device_of(device); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.str(source); e != ChannelError::kNone) return e;
        if (!device_error_.empty()) return reply_error(device_error_);
        std::string error;
        auto script = backend_.load_script(source, device, &error);
        if (!script) return reply_error(error);
        MessageWriter w(MessageType::kOk);
        w.strs(script->functions());
        scripts_[id] = std::move(script);
        return send(w);
      }
      case MessageType::kUnload:
        if (ChannelError e = reader_.u64(id); e != ChannelError::kNone) return e;
        models_.erase(id);
        scripts_.erase(id);
        if (control_) control_->post_reply(Posted::kNothing);  // the turn goes back all the same
        return ChannelError::kNone;
      case MessageType::kControl: {
        // From now on requests and replies meet in the block; this reply is the last one that
        // goes on the socket unannounced.
        const int fd = reader_.take_file();
        std::string error = "no control block was passed";
        std::unique_ptr<ControlBlock> control = fd >= 0 ? ControlBlock::attach(fd, &error) : nullptr;
        if (!control) return reply_error(error);
        if (ChannelError e = reply_ok(); e != ChannelError::kNone) return e;
        control_ = std::move(control);
        return ChannelError::kNone;
      }
      case MessageType::kRunModel: {
        std::vector<OwnedTensor> inputs;
        std::uint8_t flags = 0;
        if (ChannelError e = reader_.u64(id); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.u8(flags); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.tensors(inputs); e != ChannelError::kNone) return e;
        auto it = models_.find(id);
        if (it == models_.end()) return reply_error("model not loaded in this worker");
        // The inputs are this process's own copies, or private (copy-on-write) mappings of the
        // server's sealed segments: a model that writes into them (an in-place first layer)
        // changes nothing the server stores.
        std::vector<OwnedTensor> outputs;
        const std::vector<TensorView> views = views_of(inputs);
        Status status = it->second->run(views, outputs);
        return reply_outputs(status, outputs, flags);
      }
      case MessageType::kRunScript: {
        std::string function;
        std::vector<std::string> keys, args;
        std::vector<OwnedTensor> inputs;
        std::uint8_t flags = 0;
        if (ChannelError e = reader_.u64(id); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.u8(flags); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.str(function); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.strs(keys); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.strs(args); e != ChannelError::kNone) return e;
        if (ChannelError e = reader_.tensors(inputs); e != ChannelError::kNone) return e;
        auto it = scripts_.find(id);
        if (it == scripts_.end()) return reply_error("script not loaded in this worker");
        std::vector<OwnedTensor> outputs;
        const std::vector<TensorView> views = views_of(inputs);
        Status status = it->second->run(function, views, keys, args, outputs);
        return reply_outputs(status, outputs, flags);
      }
      default:
        return ChannelError::kProtocol;
    }
  }

  int fd_;
  MessageReader reader_;
  Backend& backend_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Model>> models_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Script>> scripts_;
  std::string device_error_;
  std::unique_ptr<ControlBlock> control_;  // once the server passed one (kControl)
};

}  // namespace

int serve_worker(int channel_fd, Backend& backend, const std::function<std::string()>& confine) {
  warm_up(backend);
  const std::string confinement = confine ? confine() : std::string("none");
  MessageWriter ready(MessageType::kReady);
  ready.str(confinement);
  if (ready.send(channel_fd, kNoDeadline) != ChannelError::kNone) return 2;
  return WorkerLoop(channel_fd, backend).run();
}

}  // namespace slipstream::ml::sandbox

#include "workload/kineto_trace.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cctype>
#include <cmath>
#include <istream>
#include <streambuf>
#include <limits>
#include <nlohmann/json.hpp>

#include "inflect/core/error.hpp"
#include "workload/kineto_ops.hpp"

namespace inflect::workload::kineto {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw core::Error(core::ErrorKind::input, fmt::format("{}: {}", where, what));
}

// The cpu_ops whose shapes a re-timing reads (kineto_rank.cpp): the GEMMs and the fused attention
// entry points. Other ops' shapes are not kept.
bool shaped_op(std::string_view n) {
  static const std::string_view kOps[] = {"aten::mm",
                                          "aten::addmm",
                                          "aten::bmm",
                                          "aten::baddbmm",
                                          "aten::matmul",
                                          "aten::linear",
                                          "aten::_scaled_dot_product_flash_attention",
                                          "aten::_scaled_dot_product_efficient_attention",
                                          "aten::_scaled_dot_product_cudnn_attention",
                                          "aten::_scaled_dot_product_flash_attention_backward",
                                          "aten::_scaled_dot_product_efficient_attention_backward",
                                          "aten::_scaled_dot_product_cudnn_attention_backward"};
  for (auto o : kOps)
    if (n == o) return true;
  return false;
}

// What becomes of the categories the replay does not read (summary.other).
std::string ignored_reason(const std::string& cat) {
  if (cat == "python_function") return "python_function: ignored (the host's Python call stack)";
  if (cat == "gpu_user_annotation") return "gpu_user_annotation: ignored (an annotation's span on the GPU)";
  if (cat == "Trace") return "Trace: ignored (the profiler's own span)";
  if (cat == "ac2g") return "ac2g: ignored (launch flows; the correlation id pairs launches and kernels)";
  return cat + ": ignored (not a GPU activity or a launch)";
}

class EventReader {
 public:
  EventReader(Trace& t, const json& e, std::uint32_t index) : t_(t), e_(e), index_(index) {}

  std::string where() const {
    auto n = e_.find("name");
    return fmt::format("{}: event {}{}", t_.file, index_,
                       n != e_.end() && n->is_string() ? fmt::format(" '{}'", n->get_ref<const std::string&>()) : "");
  }
  [[noreturn]] void fail(const std::string& what) const { kineto::fail(where(), what); }

  /// A time in microseconds as integer nanoseconds, within [0, hi_us].
  std::int64_t micros(const json& v, const char* field, double hi_us) const {
    if (!v.is_number()) fail(fmt::format("'{}' is {}, not a number of microseconds", field, v.type_name()));
    if (v.is_number_unsigned() || v.is_number_integer()) {
      if (v.is_number_integer() && v.get<std::int64_t>() < 0) fail(fmt::format("'{}' is negative ({})", field, v.dump()));
      const auto u = v.is_number_unsigned() ? v.get<std::uint64_t>() : static_cast<std::uint64_t>(v.get<std::int64_t>());
      if (static_cast<double>(u) > hi_us) fail(fmt::format("'{}' is {} us, past the bound of {:g} us", field, u, hi_us));
      return static_cast<std::int64_t>(u) * 1000;
    }
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) fail(fmt::format("'{}' is {}, not a time", field, v.dump()));
    if (d > hi_us) fail(fmt::format("'{}' is {:g} us, past the bound of {:g} us", field, d, hi_us));
    return std::llround(d * 1000);
  }

  /// An integer argument, or `missing` when absent; a numeric string is taken (Kineto writes some
  /// metadata through a raw-string path).
  std::int64_t integer(const json& args, const char* field, std::int64_t missing, std::int64_t lo, std::int64_t hi) const {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return missing;
    std::int64_t v = 0;
    if (it->is_number_integer()) {
      v = it->get<std::int64_t>();
    } else if (it->is_number_unsigned()) {
      if (it->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) fail(fmt::format("'{}' is {}, past {}", field, it->dump(), hi));
      v = static_cast<std::int64_t>(it->get<std::uint64_t>());
    } else if (it->is_number_float()) {
      const double d = it->get<double>();
      if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d))
        fail(fmt::format("'{}' is {}, not an integer in [{}, {}]", field, it->dump(), lo, hi));
      v = static_cast<std::int64_t>(d);
    } else if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      std::size_t used = 0;
      try {
        v = std::stoll(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != s.size()) fail(fmt::format("'{}' is \"{}\", not an integer", field, s));
    } else {
      fail(fmt::format("'{}' is {}, not an integer", field, it->type_name()));
    }
    if (v < lo || v > hi) fail(fmt::format("'{}' is {}, outside [{}, {}]", field, v, lo, hi));
    return v;
  }

  std::string text(const json& args, const char* field) const {
    auto it = args.find(field);
    if (it == args.end() || it->is_null()) return {};
    if (!it->is_string()) fail(fmt::format("'{}' is {}, not a string", field, it->type_name()));
    return it->get<std::string>();
  }

  CollectiveMeta collective(const json& args) const {
    constexpr std::int64_t kMaxRank = 1 << 24;  // 16M ranks: 1,000x the largest runs published
    const auto max_elems = static_cast<std::int64_t>(kMaxBytes);
    CollectiveMeta m;
    m.collective = text(args, "Collective name");
    m.dtype = text(args, "dtype");
    m.in_nelems = integer(args, "In msg nelems", -1, 0, max_elems);
    m.out_nelems = integer(args, "Out msg nelems", -1, 0, max_elems);
    m.rank_start = integer(args, "Global rank start", -1, -1, kMaxRank);  // -1: not known
    m.rank_stride = integer(args, "Global rank stride", -1, -1, kMaxRank);
    m.group_size = integer(args, "Group size", -1, -1, kMaxRank);
    m.pg_name = text(args, "Process Group Name");
    m.pg_desc = text(args, "Process Group Description");
    m.seq = integer(args, "Seq", -1, 0, std::numeric_limits<std::int64_t>::max());
    m.src = integer(args, "Src Rank", -1, -1, kMaxRank);
    m.dst = integer(args, "Dst Rank", -1, -1, kMaxRank);
    auto r = args.find("Process Group Ranks");
    if (r != args.end() && !r->is_null()) {
      // A string "[0, 1, 2]" (PyTorch truncates long lists with "..."), or an array.
      auto add = [&](std::int64_t v) {
        if (v < 0 || v > kMaxRank) fail(fmt::format("'Process Group Ranks' holds {}, not a rank", v));
        m.group_ranks.push_back(v);
      };
      if (r->is_array()) {
        for (const auto& v : *r) {
          if (!v.is_number_integer()) fail("'Process Group Ranks' holds a non-integer");
          add(v.get<std::int64_t>());
        }
      } else if (r->is_string()) {
        const std::string& s = r->get_ref<const std::string&>();
        if (s.find("...") != std::string::npos) {
          m.ranks_truncated = true;
        } else {
          std::size_t i = 0;
          while (i < s.size()) {
            if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) {
              if (s[i] != '[' && s[i] != ']' && s[i] != ',' && s[i] != ' ')
                fail(fmt::format("'Process Group Ranks' is \"{}\", not a list of ranks", s));
              ++i;
              continue;
            }
            std::int64_t v = 0;
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
              v = v * 10 + (s[i] - '0');
              if (v > kMaxRank) fail(fmt::format("'Process Group Ranks' is \"{}\": a rank past {}", s, kMaxRank));
              ++i;
            }
            add(v);
          }
        }
      } else {
        fail(fmt::format("'Process Group Ranks' is {}, not a list", r->type_name()));
      }
    }
    return m;
  }

  OpShapes shapes(const json& args) const {
    OpShapes s;
    auto dims = args.find("Input Dims");
    if (dims != args.end() && dims->is_array()) {
      for (const auto& d : *dims) {
        std::vector<std::int64_t> v;
        // A tensor's dims; a scalar's [] or a tensor list's nested lists stay empty (not read).
        if (d.is_array())
          for (const auto& x : d) {
            if (!x.is_number_integer()) {
              v.clear();
              break;
            }
            const auto n = x.get<std::int64_t>();
            if (n < 0 || n > (std::int64_t{1} << 40)) fail(fmt::format("'Input Dims' holds {}, not a tensor dimension", n));
            v.push_back(n);
          }
        s.dims.push_back(std::move(v));
      }
    }
    auto strings = [&](const char* field, std::vector<std::string>& out) {
      auto it = args.find(field);
      if (it == args.end() || !it->is_array()) return;
      for (const auto& x : *it) out.push_back(x.is_string() ? x.get<std::string>() : std::string());
    };
    strings("Input type", s.types);
    strings("Concrete Inputs", s.concrete);
    return s;
  }

 private:
  Trace& t_;
  const json& e_;
  std::uint32_t index_;
};

std::uint32_t intern(Trace& t, std::unordered_map<std::string, std::uint32_t>& ids, const std::string& s) {
  auto [it, fresh] = ids.try_emplace(s, static_cast<std::uint32_t>(t.names.size()));
  if (fresh) {
    t.names.push_back(s);
    t.short_names.push_back(short_kernel_name(s));
  }
  return it->second;
}

void read_event(Trace& t, std::unordered_map<std::string, std::uint32_t>& ids, const json& e, std::uint32_t index) {
  const EventReader r(t, e, index);
  auto ph = e.find("ph");
  if (ph == e.end() || !ph->is_string()) r.fail("no 'ph' (every Chrome-trace event has a phase)");
  const std::string& phase = ph->get_ref<const std::string&>();
  if (phase != "X") {
    if (phase == "s" || phase == "f" || phase == "t")
      t.ignored.add("flow events (ph s/f): ignored (the correlation id pairs launches and kernels)");
    else if (phase == "M")
      t.ignored.add("metadata events (ph M): ignored (process and thread names)");
    else if (phase == "i" || phase == "I")
      t.ignored.add("instant events (ph i): ignored");
    else
      t.ignored.add(fmt::format("events of ph '{}': ignored", phase));
    return;
  }
  auto name = e.find("name");
  if (name == e.end() || !name->is_string()) r.fail("a complete event (ph X) without a 'name'");
  auto ts = e.find("ts");
  if (ts == e.end()) r.fail("a complete event (ph X) without 'ts'");
  auto dur = e.find("dur");
  if (dur == e.end()) r.fail("a complete event (ph X) without 'dur'");
  Event ev;
  ev.index = index;
  ev.ts = r.micros(*ts, "ts", kMaxTimestampUs);
  ev.dur = r.micros(*dur, "dur", static_cast<double>(kMaxDurationNs) / 1000);
  auto catj = e.find("cat");
  if (catj == e.end() || !catj->is_string()) {
    t.ignored.add("complete events without a category: ignored");
    return;
  }
  const std::string& cat = catj->get_ref<const std::string&>();
  const std::string& nm = name->get_ref<const std::string&>();
  static const json kEmpty = json::object();
  auto argsj = e.find("args");
  const json& args = argsj != e.end() && argsj->is_object() ? *argsj : kEmpty;
  if (cat == "kernel") ev.cat = Cat::kernel;
  else if (cat == "gpu_memcpy") ev.cat = Cat::gpu_memcpy;
  else if (cat == "gpu_memset") ev.cat = Cat::gpu_memset;
  else if (cat == "cuda_runtime") ev.cat = Cat::cuda_runtime;
  else if (cat == "cuda_driver") ev.cat = Cat::cuda_driver;
  else if (cat == "cuda_sync") ev.cat = Cat::cuda_sync;
  else if (cat == "cpu_op") ev.cat = Cat::cpu_op;
  else if (cat == "user_annotation") ev.cat = Cat::user_annotation;
  if (ev.cat == Cat::other) {
    t.ignored.add(ignored_reason(cat));
    return;
  }
  const bool has_collective = args.contains("Collective name");
  if (ev.cat == Cat::user_annotation && nm.rfind("ProfilerStep#", 0) != 0) {
    t.ignored.add("user_annotation: ignored (a span on the host)");
    return;
  }
  if (ev.cat == Cat::cpu_op && !has_collective && !(shaped_op(nm) && args.contains("Input Dims"))) {
    t.ignored.add("cpu_op: host time, kept in the gaps between launches");
    return;
  }
  auto tid = e.find("tid");
  if (tid != e.end() && tid->is_number_integer()) ev.tid = tid->get<std::int64_t>();
  constexpr std::int64_t kMaxId = std::numeric_limits<std::int64_t>::max();
  ev.correlation = r.integer(args, "correlation", -1, -1, kMaxId);
  ev.external_id = r.integer(args, "External id", -1, -1, kMaxId);
  if (ev.cat == Cat::kernel || ev.cat == Cat::gpu_memcpy || ev.cat == Cat::gpu_memset || ev.cat == Cat::cuda_sync) {
    ev.stream = r.integer(args, "stream", -1, -1, std::numeric_limits<std::int32_t>::max());
    ev.device = r.integer(args, "device", -1, -1, std::numeric_limits<std::int32_t>::max());
  }
  if (ev.cat == Cat::gpu_memcpy || ev.cat == Cat::gpu_memset)
    ev.bytes = r.integer(args, "bytes", -1, 0, static_cast<std::int64_t>(kMaxBytes));
  if (ev.cat == Cat::cuda_sync) {
    const std::string kind = r.text(args, "cuda_sync_kind");
    const std::string& k = kind.empty() ? nm : kind;
    if (k == "Stream Sync") ev.sync = SyncKind::stream;
    else if (k == "Event Sync") ev.sync = SyncKind::event;
    else if (k == "Context Sync") ev.sync = SyncKind::context;
    else if (k == "Stream Wait Event") ev.sync = SyncKind::stream_wait_event;
    else r.fail(fmt::format("cuda_sync of kind '{}' (known: Stream Sync, Event Sync, Context Sync, Stream Wait Event)", k));
    ev.wait_stream = r.integer(args, "wait_on_stream", -1, -1, std::numeric_limits<std::int32_t>::max());
    ev.wait_record_correlation = r.integer(args, "wait_on_cuda_event_record_corr_id", -1, -1, kMaxId);
  }
  if (has_collective) {
    ev.collective = static_cast<std::uint32_t>(t.collectives.size());
    t.collectives.push_back(r.collective(args));
    auto a = args.find("Is asynchronized op");
    ev.is_async = a != args.end() && a->is_boolean() && a->get<bool>();
  }
  if (ev.cat == Cat::cpu_op && shaped_op(nm) && args.contains("Input Dims")) {
    ev.shapes = static_cast<std::uint32_t>(t.shapes.size());
    t.shapes.push_back(r.shapes(args));
  }
  ev.name = intern(t, ids, nm);
  t.events.push_back(ev);
}

void read_distributed_info(Trace& t, const json& d) {
  const std::string where = t.file + ": distributedInfo";
  if (!d.is_object()) fail(where, "not an object");
  auto integer = [&](const char* f, int lo, int hi) -> std::optional<int> {
    auto it = d.find(f);
    if (it == d.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<std::int64_t>() < lo || it->get<std::int64_t>() > hi)
      fail(where, fmt::format("'{}' is {}, not an integer in [{}, {}]", f, it->dump(), lo, hi));
    return static_cast<int>(it->get<std::int64_t>());
  };
  // 131,072 ranks: 4x the largest published training runs (Llama 3: 16,384 GPUs; xAI's 100k-GPU
  // cluster), and few enough that replicating them all from one file stays cheap.
  constexpr int kMaxRanks = 1 << 17;
  t.rank = integer("rank", 0, kMaxRanks - 1);
  t.world_size = integer("world_size", 1, kMaxRanks).value_or(0);
  if (t.rank && t.world_size > 0 && *t.rank >= t.world_size)
    fail(where, fmt::format("rank {} is not below world_size {}", *t.rank, t.world_size));
  auto pgs = d.find("pg_config");
  if (pgs == d.end() || !pgs->is_array()) return;
  for (const auto& pg : *pgs) {
    if (!pg.is_object()) fail(where, "a pg_config entry is not an object");
    ProcessGroupConfig c;
    if (auto n = pg.find("pg_name"); n != pg.end() && n->is_string()) c.name = n->get<std::string>();
    if (auto n = pg.find("pg_desc"); n != pg.end() && n->is_string()) c.desc = n->get<std::string>();
    if (auto rs = pg.find("ranks"); rs != pg.end() && rs->is_array())
      for (const auto& x : *rs) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() >= kMaxRanks)
          fail(where, fmt::format("pg_config '{}' lists {}, not a rank", c.name, x.dump()));
        c.ranks.push_back(x.get<std::int64_t>());
      }
    t.groups.push_back(std::move(c));
  }
}

}  // namespace

std::string Trace::where(const Event& e) const { return fmt::format("{}: event {} '{}'", file, e.index, names[e.name]); }

namespace {

// One pass with nlohmann's callback parser; `parse(callback)` runs it over the input (a string's
// bytes or a stream) and returns what the callback kept.
template <class Parse>
Trace parse_input(Parse&& parse, const std::string& file) {
  Trace t;
  t.file = file;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::string top_key;
  bool saw_events = false;
  std::uint32_t index = 0;
  // One pass with nlohmann's callback parser: each traceEvents entry is read into an Event when
  // its object closes and then discarded, so the document never holds the events (a DOM of a
  // 500 MB trace would take several GB).
  auto callback = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    if (depth == 0 && ev == json::parse_event_t::value)
      fail(file, "not a Kineto trace: the top level is not an object holding traceEvents");
    if (depth == 1 && ev == json::parse_event_t::key) {
      top_key = parsed.get<std::string>();
      return true;
    }
    const bool in_events = top_key == "traceEvents";
    if (depth == 1 && in_events) {
      if (ev == json::parse_event_t::array_start) saw_events = true;
      else if (ev == json::parse_event_t::value || ev == json::parse_event_t::object_start)
        fail(file, "'traceEvents' is not an array");
      return true;
    }
    if (depth == 2 && in_events) {
      if (ev == json::parse_event_t::object_end) {
        if (index == std::numeric_limits<std::uint32_t>::max()) fail(file, "more than 4 billion events");
        read_event(t, ids, parsed, index++);
        return false;
      }
      if (ev == json::parse_event_t::value || ev == json::parse_event_t::array_start)
        fail(file, fmt::format("event {} is not an object", index));
    }
    return true;
  };
  json root;
  try {
    root = parse(json::parser_callback_t(callback));
  } catch (const json::parse_error& e) {
    fail(file, fmt::format("not valid JSON (truncated?) at byte {}: {}", e.byte, e.what()));
  } catch (const json::exception& e) {
    fail(file, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!root.is_object()) fail(file, "not a Kineto trace: the top level is not an object holding traceEvents");
  if (!saw_events) fail(file, "no 'traceEvents' array: not a PyTorch profiler trace");
  t.events_read = index;
  if (auto d = root.find("distributedInfo"); d != root.end()) read_distributed_info(t, *d);
  return t;
}

}  // namespace

Trace parse_trace(std::string_view text, const std::string& file) {
  return parse_input([&](json::parser_callback_t cb) { return json::parse(text.begin(), text.end(), std::move(cb)); }, file);
}

namespace {

// A gzip (or plain) file as a stream buffer: the file is read through zlib a megabyte at a time and
// never held whole, so a trace of hundreds of MB costs only the events kept.
class GzBuf : public std::streambuf {
 public:
  explicit GzBuf(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")), buf_(1 << 20) {
    if (f_ == nullptr) throw core::Error(core::ErrorKind::io, fmt::format("cannot open trace '{}'", path));
    gzbuffer(f_, 1 << 20);
  }
  ~GzBuf() override {
    if (f_ != nullptr) gzclose(f_);
  }
  GzBuf(const GzBuf&) = delete;
  GzBuf& operator=(const GzBuf&) = delete;
  /// A read error zlib reported (a corrupt or truncated gzip stream), thrown once parsing stopped.
  void check() const {
    if (!error_.empty()) throw core::Error(core::ErrorKind::io, fmt::format("cannot read trace '{}': {}", path_, error_));
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(f_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n <= 0) {
      // A truncated gzip stream ends with 0 bytes read and Z_BUF_ERROR (zlib.h, gzread).
      int code = Z_OK;
      const char* msg = gzerror(f_, &code);
      if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) error_ = msg;
      return traits_type::eof();
    }
    setg(buf_.data(), buf_.data(), buf_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string path_;
  gzFile f_;
  std::vector<char> buf_;
  std::string error_;
};

}  // namespace

Trace parse_trace_file(const std::string& path) {
  GzBuf buf(path);
  std::istream in(&buf);
  try {
    Trace t = parse_input([&](json::parser_callback_t cb) { return json::parse(in, std::move(cb)); }, path);
    buf.check();
    return t;
  } catch (const core::Error&) {
    buf.check();  // a gzip error explains a JSON error it caused
    throw;
  }
}

std::optional<double> dtype_bytes(std::string_view d) {
  // c10 ScalarType names (c10/core/ScalarType.h), as PyTorch records a collective's dtype.
  if (d == "Byte" || d == "Char" || d == "Bool" || d == "QInt8" || d == "QUInt8" || d.rfind("Float8_", 0) == 0) return 1.0;
  if (d == "Short" || d == "Half" || d == "BFloat16") return 2.0;
  if (d == "Int" || d == "Float" || d == "ComplexHalf" || d == "QInt32") return 4.0;
  if (d == "Long" || d == "Double" || d == "ComplexFloat" || d == "UInt64") return 8.0;
  if (d == "ComplexDouble") return 16.0;
  if (d == "UInt16") return 2.0;
  if (d == "UInt32") return 4.0;
  return std::nullopt;
}

}  // namespace inflect::workload::kineto

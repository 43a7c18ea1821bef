#include "plan/stage_replay.hpp"

#include <algorithm>
#include <utility>

namespace inflect::plan::compiler {

using workload::CollectiveKind;
using workload::GroupId;
using workload::ParallelDim;
using workload::RankId;

StageReplay::StageReplay(const PlanContext& ctx, workload::ExecutionGraph& g, GroupTable& groups)
    : ctx_(ctx), g_(g), groups_(groups), stage_recordings_(static_cast<std::size_t>(ctx.plan.pp)) {}

bool StageReplay::add_replica(RankId r) {
  const StageRecording& rec = stage_recordings_[static_cast<std::size_t>(ctx_.mesh.coords(r).pp)];
  return rec.usable && replay(r, rec);
}

bool StageReplay::start_recording(RankId r) {
  StageRecording& rec = stage_recordings_[static_cast<std::size_t>(ctx_.mesh.coords(r).pp)];
  if (rec.recorded) return false;
  rec.recorded = true;
  recording_ = &rec;
  recording_rank_ = r;
  recorded_groups_.clear();
  recorded_colls_.assign(recorded_colls_.size(), 0);
  groups_.set_observer(this);
  return true;
}

// Each group request as the offset of the asked-for rank from the emitting one, once.
void StageReplay::group_asked(GroupType type, RankId rank, int chunk, GroupId got) {
  if (!recorded_groups_.emplace(group_request_key(type, rank, chunk), 0).second) return;
  const Coords at = ctx_.mesh.coords(recording_rank_), to = ctx_.mesh.coords(rank);
  Coords offset;
  for (Dim d : {Dim::tp, Dim::cp, Dim::pp, Dim::dp}) {
    const int n = ctx_.mesh.size(d);
    offset.set(d, ((to.get(d) - at.get(d)) % n + n) % n);
  }
  recording_->groups.push_back(GroupAsk{type, chunk, offset, got});
}

// Each collective, plain or fused, once. A collective's id stands for its key (the table gives
// one id per key, and a fused pair's id is its own entry), so a flag per id finds the repeats
// without hashing the key again on the recorded rank's every request.
bool StageReplay::first_ask(std::uint32_t got) {
  if (got >= recorded_colls_.size()) recorded_colls_.resize(got + 1, 0);
  if (recorded_colls_[got]) return false;
  recorded_colls_[got] = 1;
  return true;
}

void StageReplay::collective_asked(const CollKey& key, std::uint32_t got) {
  if (first_ask(got)) recording_->colls.push_back(CollAsk{key, kNoColl, kNoColl, got});
}

void StageReplay::fused_asked(std::uint32_t first, std::uint32_t next, std::uint32_t got) {
  if (first_ask(got)) recording_->colls.push_back(CollAsk{CollKey{}, first, next, got});
}

// The stage's first rank has been emitted and ended: note which kept rank the stage's ranks will
// copy and what the emitted rank's collectives are in that rank's terms; the recording is usable
// if every collective's group came from a recorded group request.
void StageReplay::finish_recording() {
  groups_.set_observer(nullptr);
  StageRecording& rec = *recording_;
  recording_ = nullptr;
  if (!g_.replicas().empty() && g_.replicas().back().rank == recording_rank_) {
    rec.kept = g_.replicas().back().kept;
    rec.kept_colls = g_.replicas().back().colls;
  } else {
    rec.kept = static_cast<std::uint32_t>(g_.kept_ranks().size() - 1);
    rec.kept_colls = g_.kept_ranks().back().colls;
  }
  std::unordered_map<GroupId, char> got;
  for (const GroupAsk& a : rec.groups) got.emplace(a.got, 0);
  std::unordered_map<std::uint32_t, char> asked;
  for (const CollAsk& c : rec.colls) asked.emplace(c.got, 0);
  rec.usable = std::all_of(rec.colls.begin(), rec.colls.end(),
                           [&](const CollAsk& c) { return c.first != kNoColl || got.count(c.key.group) > 0; }) &&
               std::all_of(rec.kept_colls.begin(), rec.kept_colls.end(), [&](std::uint32_t c) { return asked.count(c) > 0; });
}

// Adds rank r as a replica of its stage's recording, asking for the groups and collectives that
// emitting it would have asked for, in the same order. Returns false, having created nothing,
// when r's groups would not correspond one-to-one to the recorded rank's. That check runs on the
// keys of groups not created yet, so it cannot use workload::RankComparer; it predicts the one
// add_replica then applies (workload/rank_classes.hpp), whose verdict stands.
bool StageReplay::replay(RankId r, const StageRecording& rec) {
  const Coords at = ctx_.mesh.coords(r);
  std::vector<RankId> asked(rec.groups.size());
  std::unordered_map<GroupId, std::uint64_t> fwd;
  std::unordered_map<std::uint64_t, GroupId> bwd;
  for (std::size_t i = 0; i < rec.groups.size(); ++i) {
    const GroupAsk& a = rec.groups[i];
    Coords to;
    for (Dim d : {Dim::tp, Dim::cp, Dim::pp, Dim::dp}) to.set(d, (at.get(d) + a.offset.get(d)) % ctx_.mesh.size(d));
    asked[i] = ctx_.mesh.rank(to);
    const std::uint64_t key = groups_.group_key(a.type, asked[i], a.chunk);
    if (fwd.emplace(a.got, key).first->second != key || bwd.emplace(key, a.got).first->second != a.got) return false;
  }
  std::unordered_map<GroupId, GroupId> groups;
  for (std::size_t i = 0; i < rec.groups.size(); ++i) groups[rec.groups[i].got] = groups_.group(rec.groups[i].type, asked[i], rec.groups[i].chunk);
  std::unordered_map<std::uint32_t, std::uint32_t> colls;
  for (const CollAsk& c : rec.colls)
    colls[c.got] = c.first != kNoColl ? groups_.fused(colls.at(c.first), colls.at(c.next))
                                      : groups_.collective(static_cast<CollectiveKind>(c.key.kind), static_cast<ParallelDim>(c.key.dim),
                                                           groups.at(c.key.group), c.key.bytes, c.key.name);
  std::vector<std::uint32_t> mine;
  mine.reserve(rec.kept_colls.size());
  for (std::uint32_t c : rec.kept_colls) mine.push_back(colls.at(c));
  g_.add_replica(r, rec.kept, std::move(mine));
  return true;
}

}  // namespace inflect::plan::compiler

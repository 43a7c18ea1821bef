#pragma once
// Stage replay: adds full fidelity's ranks that copy their stage's first rank without emitting
// their ops (the reasoning is at StageReplay). Separate because it is a second way to add a rank,
// beside emitting it; it records the emitted rank's requests as the GroupTable's observer, so the
// code that emits never knows whether it is being recorded.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/group_table.hpp"
#include "plan/plan_context.hpp"

namespace inflect::plan::compiler {

// Full fidelity, stage replay (CompileOptions::replay_stage_ranks). emit_rank depends on its
// rank only through the rank's pipeline stage and the process groups it asks for (group(), by
// type, chunk and a rank that is the emitting rank or one at fixed coordinate offsets from it:
// its TP/CP ring predecessor, its peer in another stage). So each stage's first rank is
// emitted while its requests are recorded — each group request as the offset of the asked-for
// rank from the emitting one, each collective with the group it got — and the stage's other
// ranks replay them from their own coordinates, in the same order, so that the same groups and
// collectives are created with the same ids as emitting them would; they are added to the graph
// as replicas (ExecutionGraph::add_replica) without their ops. A replay whose groups would not
// correspond one-to-one falls back to emitting the rank.
class StageReplay : private GroupObserver {
 public:
  StageReplay(const PlanContext& ctx, workload::ExecutionGraph& g, GroupTable& groups);

  /// Adds rank r as a replica of its stage's recorded rank, if the stage has a usable recording
  /// and r's groups correspond one-to-one to the recorded rank's. False: r must be emitted.
  bool add_replica(workload::RankId r);
  /// Called before emitting rank r: when r is its stage's first, records its requests until
  /// finish_recording() and returns true.
  bool start_recording(workload::RankId r);
  /// Called after the recorded rank's ExecutionGraph::end_rank: stops recording and notes which
  /// kept rank the stage's other ranks will copy.
  void finish_recording();

 private:
  struct GroupAsk {
    GroupType type;
    int chunk;
    Coords offset;          // of the asked-for rank from the emitting rank, per dimension, modulo its size
    workload::GroupId got;  // what the emitting rank got
  };
  /// A collective asked for (by its key), or two fused (by the recorded rank's ids).
  struct CollAsk {
    CollKey key{};
    std::uint32_t first = kNoColl, next = kNoColl;  // fused(first, next) when first != kNoColl
    std::uint32_t got = 0;
  };
  struct StageRecording {
    bool recorded = false;  // its first rank has been emitted
    bool usable = false;
    std::vector<GroupAsk> groups;           // distinct, in first-ask order
    std::vector<CollAsk> colls;             // distinct, in first-ask order (plain and fused share ids)
    std::uint32_t kept = 0;                 // the kept rank the stage's ranks copy
    std::vector<std::uint32_t> kept_colls;  // the emitted rank's counterparts of that rank's collectives
  };

  void group_asked(GroupType type, workload::RankId rank, int chunk, workload::GroupId got) override;
  void collective_asked(const CollKey& key, std::uint32_t got) override;
  void fused_asked(std::uint32_t first, std::uint32_t next, std::uint32_t got) override;
  bool first_ask(std::uint32_t got);
  bool replay(workload::RankId r, const StageRecording& rec);

  const PlanContext& ctx_;
  workload::ExecutionGraph& g_;
  GroupTable& groups_;
  std::vector<StageRecording> stage_recordings_;
  StageRecording* recording_ = nullptr;
  workload::RankId recording_rank_ = 0;
  std::unordered_map<std::uint64_t, char> recorded_groups_;
  std::vector<char> recorded_colls_;  // by collective id: asked already by the recorded rank
};

}  // namespace inflect::plan::compiler

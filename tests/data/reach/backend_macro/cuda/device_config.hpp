#pragma once

namespace solver {
constexpr int warp_size = 32;
constexpr unsigned full_lane_mask = 0xffffffffu;
}  // namespace solver

#pragma once

namespace solver {
constexpr int warp_size = 64;
constexpr unsigned long long full_lane_mask = ~0ull;
}  // namespace solver

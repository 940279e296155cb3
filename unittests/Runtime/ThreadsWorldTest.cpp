//===- ThreadsWorldTest.cpp - Collectives with ranks as threads -----------===//

#include "sbp/Runtime/sbp_runtime.h"
#include "gtest/gtest.h"
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A world over `mesh` whose ranks run `body` on threads.
class World {
public:
  explicit World(std::vector<int64_t> mesh, double timeout = 30)
      : mesh(std::move(mesh)),
        world(sbp_threads_world_create(this->mesh.data(), this->mesh.size(),
                                       timeout)) {}
  ~World() { sbp_world_destroy(world); }

  /// Runs `body(comm)` on every rank and returns each rank's status.
  std::vector<int> run(const std::function<int(sbp_comm *)> &body) {
    int64_t size = sbp_world_size(world);
    std::vector<int> status(size, -1);
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < size; ++r)
      threads.emplace_back(
          [&, r] { status[r] = body(sbp_world_comm(world, r)); });
    for (std::thread &t : threads)
      t.join();
    return status;
  }

  std::string error() const {
    const char *e = sbp_world_error(world);
    return e ? e : "";
  }

  std::vector<int64_t> mesh;
  sbp_world *world;
};

/// A float tensor that owns its data.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  sbp_tensor desc;

  explicit Tensor(std::vector<int64_t> s, float fill = 0)
      : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    data.assign(n, fill);
  }
  /// The runtime's view of the tensor, valid until it is moved or resized.
  sbp_tensor *view() {
    desc = {data.data(), static_cast<int64_t>(shape.size()), shape.data(),
            SBP_F32};
    return &desc;
  }
};

const int64_t kAxis0[] = {0};
const int64_t kAxis1[] = {1};

TEST(ThreadsWorld, AllReduceKinds) {
  World world({4});
  std::vector<Tensor> sums(4, Tensor({3})), maxes(4, Tensor({3}));
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    float r = static_cast<float>(sbp_comm_rank(comm));
    Tensor in({3});
    in.data = {r, 10 * r, -r};
    int s = sbp_all_reduce(comm, kAxis0, 1, in.view(),
                           sums[sbp_comm_rank(comm)].view(), SBP_SUM);
    return s ? s
             : sbp_all_reduce(comm, kAxis0, 1, in.view(),
                              maxes[sbp_comm_rank(comm)].view(), SBP_MAX);
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(status[r], SBP_OK);
    EXPECT_EQ(sums[r].data, (std::vector<float>{6, 60, -6}));
    EXPECT_EQ(maxes[r].data, (std::vector<float>{3, 30, 0}));
  }
}

TEST(ThreadsWorld, GroupsFollowMeshAxes) {
  // On a 2x2 mesh, reducing over axis 1 pairs ranks {0, 1} and {2, 3};
  // over axis 0, {0, 2} and {1, 3}.
  World world({2, 2});
  std::vector<Tensor> overAxis1(4, Tensor({1})), overAxis0(4, Tensor({1}));
  world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    Tensor in({1}, static_cast<float>(1 << r));
    sbp_all_reduce(comm, kAxis1, 1, in.view(), overAxis1[r].view(), SBP_SUM);
    return sbp_all_reduce(comm, kAxis0, 1, in.view(), overAxis0[r].view(),
                          SBP_SUM);
  });
  EXPECT_EQ(overAxis1[0].data[0], 1 + 2);
  EXPECT_EQ(overAxis1[3].data[0], 4 + 8);
  EXPECT_EQ(overAxis0[0].data[0], 1 + 4);
  EXPECT_EQ(overAxis0[3].data[0], 2 + 8);
  EXPECT_EQ(world.error(), "");
}

TEST(ThreadsWorld, AllGatherUnevenPieces) {
  // 10 rows over 4 ranks: 3, 3, 2, 2; each row holds its global index.
  World world({4});
  std::vector<Tensor> out(4, Tensor({10, 2}));
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    int64_t rows = 10 / 4 + (r < 10 % 4),
            first = r * 2 + std::min<int64_t>(r, 2);
    Tensor in({rows, 2});
    for (int64_t i = 0; i < rows; ++i)
      in.data[2 * i] = in.data[2 * i + 1] = static_cast<float>(first + i);
    return sbp_all_gather(comm, kAxis0, 1, in.view(), out[r].view(), 0);
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(status[r], SBP_OK) << world.error();
    for (int i = 0; i < 10; ++i)
      EXPECT_EQ(out[r].data[2 * i + 1], i);
  }
}

TEST(ThreadsWorld, AllGatherInnerDimension) {
  World world({2});
  std::vector<Tensor> out(2, Tensor({2, 4}));
  world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    Tensor in({2, 2});
    in.data = {float(10 * r), float(10 * r + 1), float(10 * r + 2),
               float(10 * r + 3)};
    return sbp_all_gather(comm, kAxis0, 1, in.view(), out[r].view(), 1);
  });
  EXPECT_EQ(out[1].data, (std::vector<float>{0, 1, 10, 11, 2, 3, 12, 13}));
}

TEST(ThreadsWorld, ReduceScatterUneven) {
  // Sum of 3 ranks' [1, 5] rows of r+1, scattered as 2 + 2 + 1 columns.
  World world({3});
  std::vector<Tensor> out = {Tensor({1, 2}), Tensor({1, 2}), Tensor({1, 1})};
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    Tensor in({1, 5});
    for (int i = 0; i < 5; ++i)
      in.data[i] = static_cast<float>((r + 1) * (i + 1));
    return sbp_reduce_scatter(comm, kAxis0, 1, in.view(), out[r].view(), 1,
                              SBP_SUM);
  });
  for (int r = 0; r < 3; ++r)
    ASSERT_EQ(status[r], SBP_OK) << world.error();
  EXPECT_EQ(out[0].data, (std::vector<float>{6, 12}));
  EXPECT_EQ(out[1].data, (std::vector<float>{18, 24}));
  EXPECT_EQ(out[2].data, (std::vector<float>{30}));
}

TEST(ThreadsWorld, AllToAllMovesTheSplit) {
  // A 4x4 matrix held by rows (S(0)) over 2 ranks becomes held by columns.
  World world({2});
  std::vector<Tensor> out(2, Tensor({4, 2}));
  world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    Tensor in({2, 4});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        in.data[4 * i + j] = static_cast<float>(10 * (2 * r + i) + j);
    return sbp_all_to_all(comm, kAxis0, 1, in.view(), out[r].view(), 1, 0);
  });
  // Rank 1 holds columns 2 and 3 of every row.
  EXPECT_EQ(out[1].data, (std::vector<float>{2, 3, 12, 13, 22, 23, 32, 33}));
}

TEST(ThreadsWorld, BroadcastFromRoot) {
  World world({4});
  std::vector<Tensor> out(4, Tensor({2}));
  world.run([&](sbp_comm *comm) {
    Tensor in({2}, static_cast<float>(sbp_comm_rank(comm)));
    return sbp_broadcast(comm, kAxis0, 1, in.view(),
                         out[sbp_comm_rank(comm)].view(), 2);
  });
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(out[r].data, (std::vector<float>{2, 2}));
}

TEST(ThreadsWorld, SendAndReceiveAroundARing) {
  World world({4});
  std::vector<Tensor> got(4, Tensor({1}));
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    int64_t r = sbp_comm_rank(comm);
    Tensor first({1}, float(r)), second({1}, float(100 + r));
    if (int s = sbp_send(comm, kAxis0, 1, first.view(), (r + 1) % 4))
      return s;
    if (int s = sbp_send(comm, kAxis0, 1, second.view(), (r + 1) % 4))
      return s;
    Tensor discard({1});
    if (int s = sbp_recv(comm, kAxis0, 1, discard.view(), (r + 3) % 4))
      return s;
    return sbp_recv(comm, kAxis0, 1, got[r].view(), (r + 3) % 4);
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(status[r], SBP_OK) << world.error();
    // Messages arrive in order: the second one is 100 + the sender's rank.
    EXPECT_EQ(got[r].data[0], 100 + (r + 3) % 4);
  }
}

TEST(ThreadsWorld, AMissingRankTimesOutEveryone) {
  World world({4}, /*timeout=*/0.2);
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    if (sbp_comm_rank(comm) == 3)
      return 0; // Never joins.
    Tensor in({1}), out({1});
    return sbp_all_reduce(comm, kAxis0, 1, in.view(), out.view(), SBP_SUM);
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(status[r], SBP_OK);
  EXPECT_NE(world.error().find("all_reduce: timed out after 0.2 s waiting "
                               "for rank 3"),
            std::string::npos)
      << world.error();
}

TEST(ThreadsWorld, AnAbortStopsEveryRank) {
  World world({4});
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    if (sbp_comm_rank(comm) == 1) {
      sbp_comm_abort(comm, "kernel failed");
      return -1;
    }
    Tensor in({1}), out({1});
    return sbp_all_reduce(comm, kAxis0, 1, in.view(), out.view(), SBP_SUM);
  });
  for (int r : {0, 2, 3})
    EXPECT_EQ(status[r], SBP_ERR_ABORTED);
  EXPECT_EQ(world.error(), "rank 1: kernel failed");
}

TEST(ThreadsWorld, BadAxesAreAnError) {
  World world({2});
  const int64_t axes[] = {1};
  std::vector<int> status = world.run([&](sbp_comm *comm) {
    Tensor in({1}), out({1});
    return sbp_all_reduce(comm, axes, 1, in.view(), out.view(), SBP_SUM);
  });
  EXPECT_EQ(status[0] == SBP_ERR_INVALID || status[1] == SBP_ERR_INVALID, true);
  EXPECT_NE(world.error().find("invalid mesh axes [1]"), std::string::npos);
}

} // namespace

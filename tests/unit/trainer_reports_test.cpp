// TrainerReports: what any client may report is bounded, a report replaces the last one, and a
// full registry makes room by dropping the trainer that reported least recently.
#include <gtest/gtest.h>

#include <string>

#include "server/train/trainer_reports.hpp"

namespace slipstream::server {
namespace {

TEST(TrainerReports, ReportsReplaceAndListInNameOrder) {
  TrainerReports reports;
  EXPECT_EQ(reports.put("pic/trainer", {{"state", "training"}, {"loss", "0.5"}}), "");
  EXPECT_EQ(reports.put("ocean/trainer", {{"state", "waiting"}}), "");
  EXPECT_EQ(reports.put("pic/trainer", {{"state", "done"}}), "");
  const auto all = reports.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "ocean/trainer");
  EXPECT_EQ(all[1].fields, (TrainerReports::Fields{{"state", "done"}}));
  const std::string name = "pic/trainer", missing = "none";
  EXPECT_EQ(reports.list(&name).size(), 1u);
  EXPECT_TRUE(reports.list(&missing).empty());
}

TEST(TrainerReports, BoundsAreErrorsAndStoreNothing) {
  TrainerReports reports;
  EXPECT_NE(reports.put("", {}), "");
  EXPECT_NE(reports.put(std::string(TrainerReports::kMaxName + 1, 'n'), {}), "");
  EXPECT_NE(reports.put("t", {{"", "v"}}), "");
  EXPECT_NE(reports.put("t", {{std::string(TrainerReports::kMaxField + 1, 'f'), "v"}}), "");
  EXPECT_NE(reports.put("t", {{"f", std::string(TrainerReports::kMaxValue + 1, 'v')}}), "");
  TrainerReports::Fields many;
  for (std::size_t i = 0; i <= TrainerReports::kMaxFields; ++i) {
    many.emplace_back("f" + std::to_string(i), "");
  }
  EXPECT_NE(reports.put("t", many), "");
  EXPECT_EQ(reports.size(), 0u);
}

TEST(TrainerReports, AFullRegistryDropsTheLeastRecentlyReported) {
  TrainerReports reports;
  for (std::size_t i = 0; i < TrainerReports::kMaxTrainers; ++i) {
    ASSERT_EQ(reports.put("t" + std::to_string(i), {}), "");
  }
  ASSERT_EQ(reports.put("t0", {{"state", "training"}}), "");  // t0 is now the most recent
  ASSERT_EQ(reports.put("new", {}), "");
  EXPECT_EQ(reports.size(), TrainerReports::kMaxTrainers);
  const std::string t0 = "t0", t1 = "t1";
  EXPECT_EQ(reports.list(&t0).size(), 1u);
  EXPECT_TRUE(reports.list(&t1).empty());  // the least recently reported went
}

}  // namespace
}  // namespace slipstream::server

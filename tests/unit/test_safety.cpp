// Safety on the CPU: names that are not UTF-8 or hold control characters (escaping, JSON), the
// JSON files written through mkstemp (a planted symlink is never followed), --ext, the nearest
// command for a typo, helper programs without a shell, and batch -n / --resume.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/common/names.h"
#include "app/common/run_common.h"
#include "app/common/suggest.h"
#include "core/pipeline/batch.h"
#include "core/pipeline/hidden_names.h"
#include "core/video/frame_count.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

std::string read_all(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("safety");
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

TEST(Names, EscapingKeepsOneLineAndIsReversible) {
  using app::escape_name;
  EXPECT_EQ(escape_name("plain name.mp4"), "plain name.mp4");
  EXPECT_EQ(escape_name("caf\xc3\xa9.mp4"), "caf\xc3\xa9.mp4");  // valid UTF-8 passes
  EXPECT_EQ(escape_name("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(escape_name("\x1b[31m"), "\\x1b[31m");
  EXPECT_EQ(escape_name("back\\slash"), "back\\\\slash");
  EXPECT_EQ(escape_name("caf\xe9"), "caf\\xe9");              // Latin-1: not UTF-8
  EXPECT_EQ(escape_name("\xc2\x9b" "2J"), "\\xc2\\x9b2J");    // C1 CSI: a terminal escape too
  EXPECT_EQ(escape_name("\x7f"), "\\x7f");
  for (const std::string& s : {std::string("a\nb"), std::string("\\x41"), std::string("\xff\xfe\\\\"), std::string("\0z", 2),
                              std::string("\xed\xa0\x80"), std::string("ok \xe2\x82\xac")})
    EXPECT_EQ(app::unescape_name(escape_name(s)), s) << escape_name(s);
  EXPECT_EQ(app::terminal_safe("C:\\x \x1b]0;t\x07"), "C:\\x \\x1b]0;t\\x07");
  EXPECT_TRUE(app::valid_utf8("caf\xc3\xa9"));
  EXPECT_FALSE(app::valid_utf8("caf\xe9"));
  EXPECT_FALSE(app::valid_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(app::valid_utf8("\xed\xa0\x80"));      // a surrogate
}

TEST(Names, JsonWithANameThatIsNotUtf8) {
  nlohmann::json j;
  app::put_name(j, "input", "caf\xe9.mp4");
  app::put_name(j, "output", "ok.mp4");
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what aborted every JSON output (D1)
  const auto back = nlohmann::json::parse(app::dump_json(j));
  EXPECT_EQ(back["input"], "caf\xef\xbf\xbd.mp4");            // U+FFFD
  EXPECT_EQ(app::unescape_name(back["input_escaped"]), "caf\xe9.mp4");
  EXPECT_FALSE(back.contains("output_escaped"));
}

TEST_F(TempDir, JsonFilesNeverFollowAPlantedSymlink) {
  const std::string victim = dir_ + "/victim", report = dir_ + "/r.json";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::symlink(victim.c_str(), (report + ".part").c_str()), 0);
  nlohmann::json j = {{"input", "caf\xe9"}};
  ASSERT_TRUE(app::write_json_file(report, j).is_ok());
  EXPECT_EQ(read_all(victim), "precious\n");
  EXPECT_EQ(nlohmann::json::parse(read_all(report))["input"], "caf\xef\xbf\xbd");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"r.json", "r.json.part", "victim"}));  // no temporary file left
  const Status s = app::write_json_file(dir_ + "/no/such/folder/r.json", j);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("no/such/folder/r.json: cannot write"), std::string::npos) << s.message();
}

// A JSON file that cannot be written (here: a file-size limit of 16 bytes, EFBIG) removes what an
// earlier run left at its path, so that no stale report passes for this run's.
TEST_F(TempDir, AJsonFileNotWrittenLeavesNoStaleOneBehind) {
  const std::string report = dir_ + "/r.json";
  std::ofstream(report) << "{\"stale\": 1}\n";
  nlohmann::json j = {{"files", std::string(4096, 'x')}};
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = old;
  tiny.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  const Status s = app::write_json_file(report, j);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, previous);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("the older file there was removed"), std::string::npos) << s.message();
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{});  // neither the stale report nor a temporary file
}

// Names near NAME_MAX: the hidden files beside an output stay within it, distinct for names that
// share their start, stable (a resumed run finds them), cut on a UTF-8 character's boundary.
TEST_F(TempDir, HiddenNamesFitNameMax) {
  const std::string short_name = dir_ + "/a.mkv";
  EXPECT_EQ(pipeline::hidden_sibling(short_name, ".histeq"), dir_ + "/.a.mkv.histeq");
  EXPECT_EQ(pipeline::hidden_sibling("a.mkv", ".XXXXXX.part"), ".a.mkv.XXXXXX.part");
  const std::string a = dir_ + "/" + std::string(251, 'x') + ".mkv", b = dir_ + "/" + std::string(250, 'x') + "y.mkv";
  for (const char* suffix : {".histeq", ".XXXXXX.part", ".histeq.XXXXXX"}) {
    const std::string ha = pipeline::hidden_sibling(a, suffix), hb = pipeline::hidden_sibling(b, suffix);
    EXPECT_EQ(ha.size() - dir_.size() - 1, 255u) << suffix;
    EXPECT_NE(ha, hb);
    EXPECT_EQ(ha, pipeline::hidden_sibling(a, suffix));
    EXPECT_EQ(ha.compare(ha.size() - std::string(suffix).size(), std::string::npos, suffix), 0);
  }
  std::string wide;  // 2-byte characters: the cut never splits one
  for (int i = 0; i < 125; ++i) wide += "\xc3\xa9";
  const std::string hw = pipeline::hidden_sibling(dir_ + "/" + wide + ".mkv", ".XXXXXX.part");
  const std::string kept = hw.substr(dir_.size() + 2, hw.find('~') - dir_.size() - 2);
  EXPECT_EQ(kept.size() % 2, 0u);
  EXPECT_EQ(kept, wide.substr(0, kept.size()));
  // remove_stale_parts finds the shortened temporary file of a long output, and only that.
  auto part_of = [](const std::string& output) {  // what mkstemps makes of the template
    std::string p = pipeline::hidden_sibling(output, ".XXXXXX.part");
    return p.replace(p.size() - 11, 6, "Ab12Cd");
  };
  std::ofstream(part_of(a)) << "half";
  std::ofstream(part_of(b)) << "b's";
  EXPECT_EQ(pipeline::remove_stale_parts(a), 1);
  EXPECT_EQ(names_in(dir_).size(), 1u);
}

TEST(Suggest, TheNearestCommandOrFlag) {
  EXPECT_EQ(app::edit_distance("exprot", "export"), 1);
  EXPECT_EQ(app::nearest("exprot", {"info", "bench", "play", "export", "quality"}), "export");
  EXPECT_EQ(app::nearest("--overwrtie", {"--output", "--overwrite", "--report"}), "--overwrite");
  EXPECT_EQ(app::nearest("xyz", {"info", "play"}), "");
  EXPECT_EQ(app::nearest("pla", {"info", "play"}), "play");
}

TEST_F(TempDir, HelperProgramsRunWithoutAShellAndNeverFromTheWorkingDirectory) {
  const std::string marker = dir_ + "/ran";
  const std::string arg = "x'; touch '" + marker + "'; echo '";
  EXPECT_EQ(app::run_program({"/bin/echo", arg}), 0);
  EXPECT_NE(::access(marker.c_str(), F_OK), 0);
  EXPECT_EQ(app::run_program({"/bin/sh", "-c", "exit 7"}), 7);
  EXPECT_EQ(app::run_program({dir_ + "/missing-program"}), -1);
  ASSERT_EQ(::mkdir((dir_ + "/bench").c_str(), 0755), 0);
  std::ofstream(dir_ + "/bench/plot_paper.py") << "print('planted')\n";
  EXPECT_EQ(app::find_data_script("plot_paper.py", "", "."), "");          // a relative folder is the cwd's
  EXPECT_EQ(app::find_data_script("plot_paper.py", "bench", ""), "");
  EXPECT_EQ(app::find_data_script("plot_paper.py", dir_ + "/none", dir_), dir_ + "/bench/plot_paper.py");
  EXPECT_EQ(app::find_data_script("plot_paper.py", dir_ + "/bench", ""), dir_ + "/bench/plot_paper.py");
}

TEST(BatchPlan, AnExtensionIsLettersAndDigits) {
  for (const char* ext : {"mkv/../../../escaped.mkv", "../x", "mk v", ".", "a/b", "mkv\n"}) {
    auto p = pipeline::plan_batch({"/tmp/in.mp4"}, "/tmp/out", ext);
    ASSERT_FALSE(p.is_ok()) << ext;
    EXPECT_NE(p.status().message().find("letters and digits"), std::string::npos);
  }
  for (const char* ext : {"mkv", ".mkv", "MP4", "m2ts"}) {
    auto p = pipeline::plan_batch({"/tmp/in.mp4"}, "/tmp/out", ext);
    ASSERT_TRUE(p.is_ok()) << ext;
    EXPECT_EQ((*p)[0].output.rfind("/tmp/out/in.", 0), 0u);
  }
}

video::SyntheticOptions clip(int frames) {
  video::SyntheticOptions o;
  o.width = 64;
  o.height = 36;
  o.fps = 30;
  o.duration_s = frames / 30.0;
  return o;
}

class Resume : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    in_ = dir_ + "/in";
    out_ = dir_ + "/out";
    ASSERT_EQ(::mkdir(in_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(out_.c_str(), 0755), 0);
    ASSERT_TRUE(write_synthetic_clip(in_ + "/a.mkv", clip(6)).is_ok());
    ASSERT_TRUE(write_synthetic_clip(in_ + "/b.mkv", clip(9)).is_ok());
    auto items = pipeline::plan_batch({in_}, out_);
    ASSERT_TRUE(items.is_ok());
    items_ = *items;
    base_.codec = "ffv1";
    base_.pipeline.equalizer.cpu = true;
  }
  std::vector<pipeline::BatchFileResult> run(pipeline::Existing e) {
    std::atomic<bool> stop{false};
    return pipeline::run_batch(items_, base_, pipeline::plan_jobs(1, false, {}, 2, items_.size()), stop, {}, e);
  }
  std::string in_, out_;
  std::vector<pipeline::BatchItem> items_;
  pipeline::ExportOptions base_;
};

TEST_F(Resume, ACompleteOutputIsRecordedAndSkipped) {
  auto r = run(pipeline::Existing::fail);
  ASSERT_EQ(r[0].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(read_all(pipeline::sidecar_path(out_ + "/a.mkv")), "frames 6\n");
  EXPECT_EQ(pipeline::sidecar_path(out_ + "/a.mkv"), out_ + "/.a.mkv.histeq");
  EXPECT_TRUE(pipeline::complete_output(out_ + "/a.mkv"));
  auto n = video::count_video_packets(out_ + "/b.mkv");
  ASSERT_TRUE(n.is_ok());
  EXPECT_EQ(*n, 9);
  // Again without -n or --resume: the outputs exist, each file fails.
  r = run(pipeline::Existing::fail);
  EXPECT_EQ(r[0].outcome, pipeline::BatchOutcome::failed);
  // b.mkv replaced by a shorter clip (a copy cut short): not complete; --resume does it again.
  ASSERT_TRUE(write_synthetic_clip(out_ + "/b.mkv", clip(4)).is_ok());
  EXPECT_FALSE(pipeline::complete_output(out_ + "/b.mkv"));
  std::ofstream(out_ + "/.a.mkv.Zx81Qa.part") << "half";   // what a killed task leaves
  std::ofstream(out_ + "/.a.mkv.other") << "not ours";
  r = run(pipeline::Existing::resume);
  EXPECT_EQ(r[0].outcome, pipeline::BatchOutcome::skipped);
  EXPECT_EQ(r[1].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(r[1].frames_out, 9);
  EXPECT_TRUE(pipeline::complete_output(out_ + "/b.mkv"));
  EXPECT_EQ(names_in(out_), (std::vector<std::string>{".a.mkv.histeq", ".a.mkv.other", ".b.mkv.histeq", "a.mkv", "b.mkv"}));
  EXPECT_STREQ(pipeline::outcome_name(pipeline::BatchOutcome::skipped), "skipped");
}

TEST_F(Resume, SkipExistingNeverOverwrites) {
  std::ofstream(out_ + "/a.mkv") << "mine\n";
  auto r = run(pipeline::Existing::skip);
  EXPECT_EQ(r[0].outcome, pipeline::BatchOutcome::skipped);
  EXPECT_NE(r[0].message.find("exists"), std::string::npos);
  EXPECT_EQ(r[1].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(read_all(out_ + "/a.mkv"), "mine\n");
  EXPECT_FALSE(pipeline::complete_output(out_ + "/a.mkv"));  // no record: --resume would do it again
  r = run(pipeline::Existing::resume);
  EXPECT_EQ(r[0].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(r[1].outcome, pipeline::BatchOutcome::skipped);
}

}  // namespace
}  // namespace histeq::test

#include "lab/results.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

namespace histeq::lab {

Row row_for(const CaseSpec& spec, const std::string& experiment) {
  Row base;
  base.experiment = experiment;
  base.size = spec.size.name;
  base.width = spec.size.width;
  base.height = spec.size.height;
  base.pitch_kind = spec.padded ? "padded" : "tight";
  base.bits = spec.bit_depth;
  base.bins = spec.bins;
  base.input = spec.input.name;
  return base;
}

void fill_ratios(std::vector<Row>& rows, size_t first) {
  double cub_us = 0, ceiling_gbps = 0;
  for (size_t i = first; i < rows.size(); ++i) {
    if (!rows[i].m.ok()) continue;
    if (rows[i].kernel == "cub") cub_us = rows[i].m.t.median_us;
    if (rows[i].kernel == "read_ceiling") ceiling_gbps = rows[i].m.gbps;
  }
  for (size_t i = first; i < rows.size(); ++i) {
    if (!rows[i].m.ok()) continue;
    if (cub_us > 0 && rows[i].kernel != "read_ceiling") rows[i].x_cub = cub_us / rows[i].m.t.median_us;
    if (ceiling_gbps > 0) rows[i].x_ceiling = rows[i].m.gbps / ceiling_gbps;
  }
}

Status write_file(const std::string& path, const std::function<void(std::ostream&)>& body) {
  const std::string tmp = path + ".tmp";
  std::ofstream f(tmp);
  if (!f) return HISTEQ_ERROR(Code::io_error, "cannot write " + path);
  body(f);
  f.close();
  if (!f || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return HISTEQ_ERROR(Code::io_error, "cannot write " + path);
  }
  return Status::ok();
}

Status write_csv(const std::string& path, const std::vector<Row>& rows, const std::string& command, const std::string& device) {
  return write_file(path, [&](std::ostream& f) {
    f << "# " << command << "\n# device: " << device << "\n";
    f << "experiment,size,width,height,pitch_kind,pitch,bits,bins,input,kernel,backend,status,buffers,runs,median_us,p99_us,gbps,x_cub,"
         "x_ceiling,p99_over_median,maxmin_across_inputs\n";
    for (const auto& r : rows) {
      std::string status = r.m.status;
      std::replace(status.begin(), status.end(), ',', ';');
      f << r.experiment << ',' << r.size << ',' << r.width << ',' << r.height << ',' << r.pitch_kind << ',' << r.pitch << ','
        << r.bits << ',' << r.bins << ',' << r.input << ',' << r.kernel << ',' << r.backend << ',' << status << ','
        << r.buffers << ',' << r.m.t.runs << ',' << r.m.t.median_us << ',' << r.m.t.p99_us << ',' << r.m.gbps << ','
        << r.x_cub << ',' << r.x_ceiling << ',' << r.p99_over_median << ',' << r.maxmin_across_inputs << '\n';
    }
  });
}

Status write_json(const std::string& path, const std::vector<Row>& rows, const std::string& command, const cuda::DeviceInfo* d,
                  const std::vector<Predictability>& predictability) {
  nlohmann::json j;
  j["command"] = command;
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  j["date"] = stamp;
  if (d != nullptr) {
    j["device"] = {{"name", d->name}, {"sm_count", d->sm_count}, {"l2_bytes", d->l2_bytes},
                   {"driver", cuda::version_string(d->driver_version)}, {"runtime", cuda::version_string(d->runtime_version)}};
  } else {
    j["device"] = nullptr;
  }
  j["results"] = nlohmann::json::array();
  for (const auto& r : rows) {
    j["results"].push_back({{"experiment", r.experiment}, {"size", r.size}, {"width", r.width}, {"height", r.height},
                            {"pitch_kind", r.pitch_kind}, {"pitch", r.pitch}, {"bits", r.bits}, {"bins", r.bins},
                            {"input", r.input}, {"kernel", r.kernel}, {"backend", r.backend}, {"status", r.m.status},
                            {"buffers", r.buffers}, {"runs", r.m.t.runs}, {"median_us", r.m.t.median_us},
                            {"p99_us", r.m.t.p99_us}, {"gbps", r.m.gbps}, {"x_cub", r.x_cub}, {"x_ceiling", r.x_ceiling},
                            {"p99_over_median", r.p99_over_median}, {"maxmin_across_inputs", r.maxmin_across_inputs}});
  }
  j["predictability"] = nlohmann::json::array();
  for (const auto& p : predictability) {
    j["predictability"].push_back({{"experiment", p.experiment}, {"size", p.size}, {"pitch_kind", p.pitch_kind},
                                   {"bits", p.bits}, {"kernel", p.kernel}, {"inputs", p.inputs},
                                   {"min_median_us", p.min_median_us}, {"max_median_us", p.max_median_us},
                                   {"max_over_min", p.max_over_min}, {"worst_p99_over_median", p.worst_p99_over_median},
                                   {"fastest_input", p.fastest_input}, {"slowest_input", p.slowest_input},
                                   {"worst_p99_input", p.worst_p99_input}});
  }
  return write_file(path, [&](std::ostream& f) { f << j.dump(2) << '\n'; });
}

std::vector<Predictability> fill_predictability(std::vector<Row>& rows) {
  std::vector<Predictability> table;
  auto key = [](const Row& r) { return r.experiment + '|' + r.size + '|' + r.pitch_kind + '|' + std::to_string(r.bits) + '|' + r.kernel; };
  std::vector<std::string> order;
  std::map<std::string, std::vector<Row*>> groups;
  for (auto& r : rows) {
    if (!r.m.ok() || r.m.t.median_us <= 0) continue;
    r.p99_over_median = r.m.t.p99_us / r.m.t.median_us;
    const std::string k = key(r);
    if (!groups.count(k)) order.push_back(k);
    groups[k].push_back(&r);
  }
  for (const auto& k : order) {
    const auto& g = groups[k];
    Predictability p;
    p.experiment = g[0]->experiment;
    p.size = g[0]->size;
    p.pitch_kind = g[0]->pitch_kind;
    p.bits = g[0]->bits;
    p.kernel = g[0]->kernel;
    p.inputs = static_cast<int>(g.size());
    p.min_median_us = p.max_median_us = g[0]->m.t.median_us;
    p.fastest_input = p.slowest_input = p.worst_p99_input = g[0]->input;
    for (const Row* r : g) {
      if (r->m.t.median_us < p.min_median_us) p.min_median_us = r->m.t.median_us, p.fastest_input = r->input;
      if (r->m.t.median_us > p.max_median_us) p.max_median_us = r->m.t.median_us, p.slowest_input = r->input;
      if (r->p99_over_median > p.worst_p99_over_median) p.worst_p99_over_median = r->p99_over_median, p.worst_p99_input = r->input;
    }
    p.max_over_min = p.inputs >= 2 ? p.max_median_us / p.min_median_us : 0;
    for (Row* r : g) r->maxmin_across_inputs = p.max_over_min;
    table.push_back(p);
  }
  return table;
}

}  // namespace histeq::lab

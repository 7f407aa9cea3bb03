// libgsthisteq.so: registers the element `histeq` (gsthisteq.h).
#include <gst/gst.h>
#include <histeq/histeq.hpp>

#include "gsthisteq.h"

#ifndef HISTEQ_VERSION
#define HISTEQ_VERSION "0.1.0"
#endif
#define PACKAGE "histeq"

namespace {
gboolean plugin_init(GstPlugin* plugin) {
  return gst_element_register(plugin, "histeq", GST_RANK_NONE, histeq_gst::element_type());
}
}  // namespace

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, histeq, "histogram equalization of video (histeq)", plugin_init,
                  HISTEQ_VERSION, "MIT/X11", "histeq", "histeq (this source tree)")

# Sourced by the GPU machine's GStreamer scripts (gst_device.sh, streams_device.sh): unpacks
# .carry/gst.tar.xz (made here by tools/device/prepare_gst.sh) into /tmp/histeq-gst and points PATH, the
# loader and GStreamer at it (only the carried plugins, in a registry of this run's own). Sets G (the
# staged tree) and H (its histeq). Returns 1, with a line, when the tarball is missing.
[ -f .carry/gst.tar.xz ] || { echo "gst_env.sh: .carry/gst.tar.xz is missing (run tools/device/prepare_gst.sh here, carry .carry/gst.tar.xz)"; return 1; }
rm -rf /tmp/histeq-gst && mkdir -p /tmp/histeq-gst && tar -C /tmp/histeq-gst -xJf .carry/gst.tar.xz || return 1
G=/tmp/histeq-gst/gst
H=$G/bin/histeq
export LD_LIBRARY_PATH=$G/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$G/bin:$PATH
export GST_PLUGIN_SYSTEM_PATH_1_0=$G/plugins GST_PLUGIN_PATH_1_0="" GST_PLUGIN_SCANNER_1_0=$G/libexec/gst-plugin-scanner
export GST_REGISTRY_1_0=/tmp/histeq-gst-registry.bin
rm -f "$GST_REGISTRY_1_0"

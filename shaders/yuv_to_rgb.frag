#version 330 core
// Planar YUV (4:2:0, 4:2:2 or 4:4:4: the chroma textures are sampled at their own size) to RGB.
//  - u_matrix: 0 = BT.601, 1 = BT.709 (from the stream's colour tags; 601 when untagged SD, 709 HD)
//  - u_full_range: 0 = limited (Y 16..235, C 16..240 at 8 bits), 1 = full
//  - u_scale: factor from the texture's normalized value to the 8-bit-equivalent code value, so
//    10-bit samples in 16-bit textures (value / 65535) and 8-bit ones (value / 255) share the math
//  - split view: left of u_split (0..1 in window x) shows the "before" picture (its own luma and
//    chroma: the input, or another equalization of it), right the "after"; u_split < 0 disables
//    it. u_divider_px draws a thin divider line at the split.
in vec2 v_uv;
out vec4 frag_color;

uniform sampler2D u_y;
uniform sampler2D u_y_before;
uniform sampler2D u_u;
uniform sampler2D u_v;
uniform sampler2D u_u_before;
uniform sampler2D u_v_before;
uniform int u_matrix;
uniform int u_full_range;
uniform float u_scale;
uniform float u_split;
uniform float u_divider_px;
uniform float u_width_px;

void main() {
  bool before = u_split >= 0.0 && v_uv.x < u_split;
  float y = (before ? texture(u_y_before, v_uv).r : texture(u_y, v_uv).r) * u_scale;
  float cb = (before ? texture(u_u_before, v_uv).r : texture(u_u, v_uv).r) * u_scale - 128.0;
  float cr = (before ? texture(u_v_before, v_uv).r : texture(u_v, v_uv).r) * u_scale - 128.0;
  if (u_full_range == 0) {
    y = (y - 16.0) * (255.0 / 219.0);
    cb *= 255.0 / 224.0;
    cr *= 255.0 / 224.0;
  }
  // Kr, Kb of the two matrices; the rest follows from them.
  float kr = u_matrix == 1 ? 0.2126 : 0.299;
  float kb = u_matrix == 1 ? 0.0722 : 0.114;
  float kg = 1.0 - kr - kb;
  float r = y + 2.0 * (1.0 - kr) * cr;
  float b = y + 2.0 * (1.0 - kb) * cb;
  float g = (y - kr * r - kb * b) / kg;
  vec3 rgb = clamp(vec3(r, g, b) / 255.0, 0.0, 1.0);
  if (u_split >= 0.0 && abs(v_uv.x - u_split) * u_width_px < u_divider_px) rgb = vec3(1.0, 0.85, 0.2);
  frag_color = vec4(rgb, 1.0);
}

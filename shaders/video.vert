#version 330 core
// A full-viewport quad from gl_VertexID (no vertex buffer): two triangles covering clip space.
// Texture coordinates run top-down, because video rows are stored top row first.
out vec2 v_uv;

void main() {
  const vec2 corners[4] = vec2[4](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0), vec2(1.0, 1.0));
  vec2 p = corners[gl_VertexID];
  v_uv = vec2(0.5 * (p.x + 1.0), 0.5 * (1.0 - p.y));
  gl_Position = vec4(p, 0.0, 1.0);
}

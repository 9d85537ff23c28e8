"""Text contrast as the browser paints it: every visible text of a page against the background behind it.

For each element with text of its own, the text colour and every background behind it (with their alpha, and the
opacity of the element and its ancestors) are read from the computed style, normalised by a canvas, composited,
and the WCAG 2 contrast ratio computed. Normal text needs 4.5:1, large text (24 px, or 18.66 px bold) 3:1.
Disabled controls are exempt, as WCAG says. A background image (a gradient) counts as its fallback colour.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page

__all__ = ["low_contrast"]

_CHECK = """
(root) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const rgba = (css) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = "rgba(0,0,0,0)";
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a / 255];
  };
  const over = (top, bottom) => {  // top composited over an opaque bottom
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const channel = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const luminance = (c) => 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  const ratio = (a, b) => {
    const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (l1 + 0.05) / (l2 + 0.05);
  };
  const found = [];
  for (const el of root.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const style = getComputedStyle(el);
    if (style.visibility !== "visible" || style.display === "none") continue;
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) continue;
    if (el.closest(":disabled, [aria-hidden=true], .skip, option")) continue;
    const layers = [];
    let opacity = 1;
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const s = getComputedStyle(node);
      opacity *= Number(s.opacity);
      const bg = rgba(s.backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] === 1) break;
    }
    let background = [255, 255, 255, 1];
    for (const layer of layers.reverse()) background = over(layer, background);
    const fg = rgba(style.color);
    const text = over([fg[0], fg[1], fg[2], fg[3] * opacity], background);
    const size = parseFloat(style.fontSize);
    const bold = Number(style.fontWeight) >= 700;
    const large = size >= 24 || (size >= 18.66 && bold);
    const value = ratio(text, background);
    const needed = large ? 3 : 4.5;
    if (value < needed) {
      const tag = el.tagName.toLowerCase();
      const label = el.className ? `${tag}.${String(el.className).split(" ").join(".")}` : tag;
      const text = el.textContent.trim().slice(0, 40);
      found.push({ element: label, text, ratio: Math.round(value * 100) / 100, needed });
    }
  }
  return found;
}
"""


async def low_contrast(page: Page, selector: str = "body") -> list[dict[str, Any]]:
    """Every text under ``selector`` whose contrast is below WCAG AA: element, text, ratio, ratio needed."""
    found: list[dict[str, Any]] = await page.locator(selector).evaluate(_CHECK)
    return found

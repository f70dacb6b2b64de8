// h("button", {class: "card", onclick}, "7") builds an element: text is never parsed as HTML.
export function h(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "polygon", "polyline", "text", "circle"].includes(tag);
  const node = svg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

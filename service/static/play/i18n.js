// The page's two languages. t("English text", { name }) gives the text in the page's
// language, the English text being its own key; "{name}" in it takes params.name.
// French for a browser whose language is fr*, English otherwise, unless the reader chose.
import { FR } from "./fr.js";

const KEY = "ludotheque:lang";

export function language() {
  const chosen = localStorage.getItem(KEY);
  if (chosen === "fr" || chosen === "en") return chosen;
  return (navigator.language || "en").toLowerCase().startsWith("fr") ? "fr" : "en";
}

// Remembered in this browser; the page redraws its view at once ("ludotheque:language").
export function setLanguage(lang) {
  localStorage.setItem(KEY, lang);
  document.documentElement.lang = lang;
  dispatchEvent(new Event("ludotheque:language"));
}

export function t(text, params = {}) {
  const template = language() === "fr" ? (FR[text] ?? text) : text;
  return template.replace(/\{(\w+)\}/g, (whole, key) => (key in params ? String(params[key]) : whole));
}

// t() of one of two texts by a count, given to both as {n}: French takes the singular
// for 0 and 1, English for 1 only.
export function tn(count, one, many, params = {}) {
  const single = language() === "fr" ? Math.abs(count) < 2 : count === 1;
  return t(single ? one : many, { n: count, ...params });
}

// "Ada, Bob and Cy" / "Ada, Bob et Cy".
export const and = (items) => new Intl.ListFormat(language(), { type: "conjunction" }).format(items.map(String));

// A date or a moment in the page's language.
export const date = (moment) => new Date(moment).toLocaleDateString(language());
export const moment = (when) => new Date(when).toLocaleString(language());

// French elision: "de Ada" -> "d'Ada", "le as" -> "l'as" (a word starting with a vowel or h).
export const elides = (word) => /^[aeiouyhàâéèêëîïôûüœ]/i.test(String(word));

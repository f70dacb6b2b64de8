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

export function setLanguage(lang) {
  localStorage.setItem(KEY, lang);
  document.documentElement.lang = lang;
}

export function t(text, params = {}) {
  const template = language() === "fr" ? (FR[text] ?? text) : text;
  return template.replace(/\{(\w+)\}/g, (whole, key) => (key in params ? String(params[key]) : whole));
}

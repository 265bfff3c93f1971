import { useMemo } from 'react';
import MarkdownIt from 'markdown-it';

/**
 * Markdown typed by people, rendered safely: markdown-it with raw HTML off
 * (every tag is shown as text), its link check (no javascript: or data:
 * links), and no images (they would load from other sites).
 */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false }).disable(['image']);
const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLink(tokens, idx, options, env, self);
};

export function Markdown({ text, label }: { text: string; label: string }) {
  const html = useMemo(() => md.render(text), [text]);
  // The HTML is markdown-it's own output from escaped input: no markup of the author's survives.
  return <div className="markdown" aria-label={label} role="region" dangerouslySetInnerHTML={{ __html: html }} />;
}

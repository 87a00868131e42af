/** `text` as a terminal shows it without colours: the ANSI colour sequences removed. */
// eslint-disable-next-line no-control-regex -- the escape character is what it matches
export const withoutColours = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '');

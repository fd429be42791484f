/** The package ships no types: a map of property name to (value alias → canonical value). */
declare module 'unicode-property-value-aliases-ecmascript' {
  const aliases: ReadonlyMap<string, ReadonlyMap<string, string>>;
  export default aliases;
}

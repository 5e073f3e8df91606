export declare const buildInputs: ReadonlyArray<string>
export declare const bundleIsStale: (root: string, bundle: string) => boolean

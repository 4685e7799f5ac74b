// The spec-driven fuzz test (support/fuzz-suite.ts), shard 1 of 2: jest runs the shards side by side.
import { fuzzSuite } from './support/fuzz-suite';

fuzzSuite(1);

/** The nine on-chain tools, in the order they are listed, each call under one RPC deadline. */
import type { AnyToolDefinition } from '../../kit/index.js';
import type { OnchainContext } from '../onchain-context.js';
import { getEthBalanceTool } from './get-eth-balance.js';
import { getTokenBalanceTool } from './get-token-balance.js';
import { getTokenInfoTool } from './get-token-info.js';
import { getGasPriceTool } from './get-gas-price.js';
import { getBlockTool } from './get-block.js';
import { getTxCountTool } from './get-tx-count.js';
import { getTransactionTool } from './get-transaction.js';
import { isContractTool } from './is-contract.js';
import { resolveEnsTool } from './resolve-ens.js';

export function onchainTools(context: OnchainContext): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [
    getEthBalanceTool(context),
    getTokenBalanceTool(context),
    getTokenInfoTool(context),
    getGasPriceTool(context),
    getBlockTool(context),
    getTxCountTool(context),
    getTransactionTool(context),
    isContractTool(context),
    resolveEnsTool(context),
  ];
  return tools.map((tool) => ({ ...tool, run: (args, toolContext) => context.withinDeadline(() => tool.run(args, toolContext)) }));
}

package com.acme.ticker;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

public class TickerCache {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("ticker-cache");
        consumer.setNamesrvAddr("mq.internal:9876");
        consumer.setMessageModel(MessageModel.BROADCASTING);
        consumer.setClientIP(System.getenv("POD_NAME"));
        consumer.subscribe("prices", "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();
    }
}
